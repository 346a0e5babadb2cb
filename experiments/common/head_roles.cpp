#include "experiments/common/head_roles.h"

#include "experiments/kit/kit.h"

namespace attn::experiments {

std::string kind_name(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::kEncoderSelf:
      return "encoder_self";
    case AttentionKind::kDecoderSelf:
      return "decoder_self";
    case AttentionKind::kCross:
      return "cross";
  }
  return "?";
}

std::string kind_title(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::kEncoderSelf:
      return "encoder self-attention";
    case AttentionKind::kDecoderSelf:
      return "decoder self-attention";
    case AttentionKind::kCross:
      return "cross-attention";
  }
  return "?";
}

const std::vector<HeadPattern>& head_patterns(AttentionKind kind) {
  // Encoder rows and keys are source positions 0..L-1, and L when the source ends with EOS
  // (a pattern whose key is past the last key is skipped for that row).
  static const std::vector<HeadPattern> encoder = {
      {"diagonal", "the token itself", [](int64_t, int64_t q) { return q; }},
      {"previous", "the token before", [](int64_t, int64_t q) { return q - 1; }},
      {"next", "the token after", [](int64_t L, int64_t q) { return q + 1 < L ? q + 1 : -1; }},
      {"mirror", "position L-1-q", [](int64_t L, int64_t q) { return L - 1 - q; }},
      {"first", "the first token", [](int64_t, int64_t) { return int64_t{0}; }},
      {"last", "the last character", [](int64_t L, int64_t) { return L - 1; }},
      {"eos", "the EOS token that ends the source", [](int64_t L, int64_t) { return L; }},
  };
  // Decoder rows and keys are BOS y_1 .. y_L (0..L).
  static const std::vector<HeadPattern> decoder = {
      {"diagonal", "the token itself", [](int64_t, int64_t q) { return q; }},
      {"previous", "the token before (previous output)", [](int64_t, int64_t q) { return q - 1; }},
      {"bos", "the BOS token", [](int64_t, int64_t) { return int64_t{0}; }},
  };
  // Decoder row q (0..L) over source keys 0..L-1 (and L, EOS, when the source has one); row q
  // produces source token L-1-q.
  static const std::vector<HeadPattern> cross = {
      {"backward", "source L-1-q, the token being written",
       [](int64_t L, int64_t q) { return q < L ? L - 1 - q : -1; }},
      {"just_written", "source L-q, the token written one step before (the decoder's input)",
       [](int64_t L, int64_t q) { return q >= 1 ? L - q : -1; }},
      {"forward", "source q, the same position as the output",
       [](int64_t L, int64_t q) { return q < L ? q : -1; }},
      {"forward_prev", "source q-1, one behind the output's position",
       [](int64_t L, int64_t q) { return q >= 1 && q <= L ? q - 1 : -1; }},
      {"end", "the last source character", [](int64_t L, int64_t) { return L - 1; }},
      {"eos", "the EOS token that ends the source", [](int64_t L, int64_t) { return L; }},
      {"first", "the first source token", [](int64_t, int64_t) { return int64_t{0}; }},
      {"backward_window",
       "backward + just_written: reads the input backwards, two tokens wide",
       nullptr,
       {"backward", "just_written"}},
      {"forward_window",
       "forward + forward_prev: reads the input forwards, two tokens wide",
       nullptr,
       {"forward", "forward_prev"}},
  };
  switch (kind) {
    case AttentionKind::kEncoderSelf:
      return encoder;
    case AttentionKind::kDecoderSelf:
      return decoder;
    case AttentionKind::kCross:
      return cross;
  }
  throw Error("head_patterns: unknown attention kind");
}

const std::vector<Tensor>& Seq2SeqAttention::of(AttentionKind kind) const {
  switch (kind) {
    case AttentionKind::kEncoderSelf:
      return encoder_self;
    case AttentionKind::kDecoderSelf:
      return decoder_self;
    case AttentionKind::kCross:
      return cross;
  }
  throw Error("Seq2SeqAttention: unknown attention kind");
}

std::vector<nn::MultiheadAttention*> attention_modules(nn::Seq2SeqTransformer& model,
                                                       AttentionKind kind) {
  std::vector<nn::MultiheadAttention*> out;
  const auto& enc = *model.transformer->encoder->layers;
  const auto& dec = *model.transformer->decoder->layers;
  if (kind == AttentionKind::kEncoderSelf)
    for (size_t l = 0; l < enc.size(); ++l) out.push_back(enc[l].self_attn.get());
  else
    for (size_t l = 0; l < dec.size(); ++l)
      out.push_back(kind == AttentionKind::kCross ? dec[l].multihead_attn.get()
                                                  : dec[l].self_attn.get());
  return out;
}

Seq2SeqAttention record_attention(nn::Seq2SeqTransformer& model,
                                  const Tensor& src,
                                  const Tensor& tgt_in) {
  NoGrad off;
  model.forward(src, tgt_in);
  // Every MultiheadAttention keeps the weights of its last call: read them layer by layer.
  Seq2SeqAttention a;
  for (AttentionKind kind : kAttentionKinds) {
    auto& out = kind == AttentionKind::kEncoderSelf   ? a.encoder_self
                : kind == AttentionKind::kDecoderSelf ? a.decoder_self
                                                      : a.cross;
    for (nn::MultiheadAttention* m : attention_modules(model, kind))
      out.push_back(m->last_weights());
  }
  return a;
}

Tensor head_map(const Tensor& weights, int64_t row, int64_t head) {
  if (weights.rank() != 4)
    throw Error("head_map: expected weights (B,H,Tq,Tk), got " + shape_str(weights.shape()));
  const int64_t h = weights.size(1), tq = weights.size(2), tk = weights.size(3);
  Tensor m({tq, tk});
  const real* p = weights.data() + (row * h + head) * tq * tk;
  std::copy(p, p + tq * tk, m.data());
  return m;
}

HeadRoleScores::HeadRoleScores(AttentionKind kind, int64_t layers, int64_t heads)
    : kind_(kind),
      layers_(layers),
      heads_(heads),
      sum_(static_cast<size_t>(layers * heads) * head_patterns(kind).size(), 0.0),
      chance_sum_(head_patterns(kind).size(), 0.0),
      rows_(static_cast<size_t>(layers) * head_patterns(kind).size(), 0) {}

size_t HeadRoleScores::index(int64_t layer, int64_t head, size_t pattern) const {
  return static_cast<size_t>(layer * heads_ + head) * patterns().size() + pattern;
}

void HeadRoleScores::add(int64_t layer, const Tensor& w, int64_t L) {
  if (layer < 0 || layer >= layers_ || w.rank() != 4 || w.size(1) != heads_)
    throw Error(fmt::format("HeadRoleScores::add: layer {} of {}, weights {} for {} heads", layer,
                            layers_, shape_str(w.shape()), heads_));
  const int64_t B = w.size(0), tq = w.size(2), tk = w.size(3);
  const auto& pats = patterns();
  for (int64_t q = 0; q < tq; ++q) {
    // The key of each pattern at this row, and which patterns count (their key is theirs alone).
    std::vector<int64_t> keys;
    for (const auto& p : pats) {
      const int64_t k = p.composite() ? -1 : p.key(L, q);
      keys.push_back(k >= 0 && k < tk ? k : -1);
    }
    for (size_t i = 0; i < pats.size(); ++i) {
      if (keys[i] < 0 || std::count(keys.begin(), keys.end(), keys[i]) > 1) continue;
      // Keys a causal row may see: 0..q (decoder self-attention), else all of them.
      const int64_t allowed = kind_ == AttentionKind::kDecoderSelf ? q + 1 : tk;
      rows_[static_cast<size_t>(layer) * pats.size() + i] += B;
      if (layer == 0) chance_sum_[i] += static_cast<double>(B) / static_cast<double>(allowed);
      for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < heads_; ++h)
          sum_[index(layer, h, i)] += w[((b * heads_ + h) * tq + q) * tk + keys[i]];
    }
  }
}

size_t HeadRoleScores::find(const std::string& name) const {
  const auto& pats = patterns();
  const auto it =
      std::find_if(pats.begin(), pats.end(), [&](const auto& p) { return p.name == name; });
  if (it == pats.end()) throw Error("HeadRoleScores: no pattern '" + name + "'");
  return static_cast<size_t>(it - pats.begin());
}

double HeadRoleScores::score(int64_t layer, int64_t head, size_t pattern) const {
  if (patterns().at(pattern).composite()) {
    double sum = 0;
    for (const auto& part : patterns()[pattern].parts) sum += score(layer, head, find(part));
    return sum;
  }
  const int64_t n = rows_.at(static_cast<size_t>(layer) * patterns().size() + pattern);
  return n > 0 ? sum_.at(index(layer, head, pattern)) / static_cast<double>(n) : 0.0;
}

double HeadRoleScores::chance(size_t pattern) const {
  if (patterns().at(pattern).composite()) {
    double sum = 0;
    for (const auto& part : patterns()[pattern].parts) sum += chance(find(part));
    return sum;
  }
  const int64_t n = rows_.at(pattern);  // layer 0's rows
  return n > 0 ? chance_sum_[pattern] / static_cast<double>(n) : 0.0;
}

std::string HeadRoleScores::role(int64_t layer, int64_t head, double threshold) const {
  // Single-key patterns first; a composite only when no single pattern reaches the threshold
  // (a composite always scores at least as much as its parts).
  for (bool composite : {false, true}) {
    double best_score = -1;
    size_t best_i = 0;
    for (size_t i = 0; i < patterns().size(); ++i)
      if (patterns()[i].composite() == composite && score(layer, head, i) > best_score)
        best_score = score(layer, head, i), best_i = i;
    if (best_score >= threshold) return patterns()[best_i].name;
  }
  return "mixed";
}

double HeadRoleScores::best(const std::string& name, int64_t* layer, int64_t* head) const {
  const size_t i = find(name);
  double top = -1;
  for (int64_t l = 0; l < layers_; ++l)
    for (int64_t h = 0; h < heads_; ++h)
      if (score(l, h, i) > top) {
        top = score(l, h, i);
        if (layer) *layer = l;
        if (head) *head = h;
      }
  return top;
}

}  // namespace attn::experiments
