#include "nn/rnn/seq2seq.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"

namespace attn::nn {

namespace {

Var concat_or_single(const std::vector<Var>& xs, int axis) {
  return xs.size() == 1 ? xs[0] : concat(xs, axis);
}

}  // namespace

Seq2SeqAttention seq2seq_attention_from_name(const std::string& name) {
  if (name == "none") return Seq2SeqAttention::kNone;
  if (name == "bahdanau") return Seq2SeqAttention::kBahdanau;
  if (name == "luong_dot") return Seq2SeqAttention::kLuongDot;
  if (name == "luong_general") return Seq2SeqAttention::kLuongGeneral;
  throw UsageError(fmt::format(
      "unknown seq2seq attention '{}' (none, bahdanau, luong_dot, luong_general)", name));
}

const char* seq2seq_attention_name(Seq2SeqAttention kind) {
  switch (kind) {
    case Seq2SeqAttention::kNone:
      return "none";
    case Seq2SeqAttention::kBahdanau:
      return "bahdanau";
    case Seq2SeqAttention::kLuongDot:
      return "luong_dot";
    case Seq2SeqAttention::kLuongGeneral:
      return "luong_general";
  }
  return "?";
}

RnnSeq2Seq::RnnSeq2Seq(const RnnSeq2SeqConfig& config, Generator& gen)
    : Module("RnnSeq2Seq"), cfg_(config) {
  const int64_t e = cfg_.embed_dim, h = cfg_.hidden_size;
  if (cfg_.pad_id < 0 || cfg_.pad_id >= cfg_.src_vocab || cfg_.pad_id >= cfg_.tgt_vocab ||
      cfg_.bos_id < 0 || cfg_.bos_id >= cfg_.tgt_vocab)
    throw Error(
        fmt::format("RnnSeq2Seq: pad_id {} and bos_id {} must be ids of the vocabularies "
                    "(src {}, tgt {})",
                    cfg_.pad_id, cfg_.bos_id, cfg_.src_vocab, cfg_.tgt_vocab));
  const bool additive = cfg_.attention == Seq2SeqAttention::kBahdanau;
  const bool luong_kind = cfg_.attention == Seq2SeqAttention::kLuongDot ||
                          cfg_.attention == Seq2SeqAttention::kLuongGeneral;
  RecurrentOptions rnn{.input_size = e,
                       .hidden_size = h,
                       .num_layers = cfg_.num_layers,
                       .bias = true,
                       .batch_first = true,
                       .dropout = cfg_.dropout,
                       .bidirectional = false};
  encoder_embedding = register_module(
      "encoder_embedding", std::make_shared<Embedding>(cfg_.src_vocab, e, gen, cfg_.pad_id));
  encoder = register_module("encoder", std::make_shared<Recurrent>(cfg_.cell, rnn, gen));
  decoder_embedding = register_module(
      "decoder_embedding", std::make_shared<Embedding>(cfg_.tgt_vocab, e, gen, cfg_.pad_id));
  rnn.input_size = additive ? e + h : e;  // Bahdanau's decoder also reads the context
  decoder = register_module("decoder", std::make_shared<Recurrent>(cfg_.cell, rnn, gen));
  if (additive)
    bahdanau = register_module("attention", std::make_shared<BahdanauAttention>(h, h, h, gen));
  if (luong_kind) {
    const LuongScore score =
        cfg_.attention == Seq2SeqAttention::kLuongDot ? LuongScore::kDot : LuongScore::kGeneral;
    luong = register_module("attention", std::make_shared<LuongAttention>(score, h, gen));
    combine = register_module("combine", std::make_shared<Linear>(2 * h, h, false, gen));
  }
  out_proj = register_module(
      "out_proj", std::make_shared<Linear>(additive ? 2 * h : h, cfg_.tgt_vocab, true, gen));
}

RnnSeq2Seq::Memory RnnSeq2Seq::encode(const Tensor& src, RecurrentState& state) {
  if (src.rank() != 2)
    throw Error(
        fmt::format("RnnSeq2Seq: src must be (B,S) token ids, got {}", shape_str(src.shape())));
  const int64_t b = src.size(0), s = src.size(1);
  // A row's length: everything before its trailing padding.
  std::vector<int64_t> lengths(b, s);
  bool padded = false;
  for (int64_t r = 0; r < b; ++r) {
    while (lengths[r] > 0 && src[r * s + lengths[r] - 1] == cfg_.pad_id) --lengths[r];
    padded = padded || lengths[r] < s;
  }
  Memory memory;
  if (padded) {
    Tensor mask({b, s});
    for (int64_t r = 0; r < b; ++r)
      for (int64_t j = lengths[r]; j < s; ++j) mask[r * s + j] = 1;
    memory.pad_mask = mask;
  } else {
    lengths.clear();  // every row is full: no freezing needed
  }
  RecurrentOutput out = encoder->forward(encoder_embedding->forward(src), std::nullopt, lengths);
  state = out.state;
  memory.outputs = out.y;  // (B,S,H)
  if (bahdanau) memory.keys = bahdanau->project_memory(memory.outputs);
  return memory;
}

Seq2SeqOutput RnnSeq2Seq::decode_bahdanau(const Var& embedded,
                                          const Memory& memory,
                                          RecurrentState& state) {
  const int64_t b = embedded.size(0), steps = embedded.size(1), h = cfg_.hidden_size;
  const int64_t top = cfg_.num_layers - 1;
  std::vector<Var> logits, weights;
  for (int64_t t = 0; t < steps; ++t) {
    // The query is the decoder's previous top-layer state s_{t-1}: (1,B,H) -> (B,1,H).
    const Var query = reshape(slice(state.h, 0, top, top + 1), {b, 1, h});
    AttentionStep a = bahdanau->forward(query, memory.keys, memory.outputs, memory.pad_mask);
    const Var input = concat({slice(embedded, 1, t, t + 1), a.context}, 2);  // (B,1,E+H)
    RecurrentOutput out = decoder->forward(input, state);
    state = out.state;
    logits.push_back(out_proj->forward(concat({out.y, a.context}, 2)));  // (B,1,V)
    weights.push_back(a.weights);                                        // (B,1,S)
  }
  return {concat_or_single(logits, 1), concat_or_single(weights, 1)};
}

Seq2SeqOutput RnnSeq2Seq::decode(const Tensor& tokens,
                                 const Memory& memory,
                                 RecurrentState& state) {
  if (tokens.rank() != 2 || tokens.size(0) != memory.outputs.size(0))
    throw Error(fmt::format("RnnSeq2Seq: target tokens must be (B,T) with B = {}, got {}",
                            memory.outputs.size(0), shape_str(tokens.shape())));
  const Var embedded = decoder_embedding->forward(tokens);  // (B,T,E)
  if (bahdanau) return decode_bahdanau(embedded, memory, state);
  RecurrentOutput out = decoder->forward(embedded, state);  // every step in one call
  state = out.state;
  if (!luong) return {out_proj->forward(out.y), Var()};
  AttentionStep a = luong->forward(out.y, memory.outputs, memory.pad_mask);
  const Var attentional = tanh(combine->forward(concat({a.context, out.y}, 2)));  // (B,T,H)
  return {out_proj->forward(attentional), a.weights};
}

Seq2SeqOutput RnnSeq2Seq::forward(const Tensor& src, const Tensor& tgt_in) {
  RecurrentState state;
  const Memory memory = encode(src, state);
  return decode(tgt_in, memory, state);
}

Var RnnSeq2Seq::loss(const Tensor& src, const Tensor& tgt_in, const Tensor& tgt_out) {
  return cross_entropy(forward(src, tgt_in).logits, tgt_out, cfg_.pad_id);
}

GreedyResult RnnSeq2Seq::greedy_decode(const Tensor& src, int64_t max_len) {
  if (max_len <= 0)
    throw Error(fmt::format("greedy_decode: max_len must be positive, got {}", max_len));
  NoGrad off;
  RecurrentState state;
  const Memory memory = encode(src, state);
  const int64_t b = src.size(0), s = src.size(1), v = cfg_.tgt_vocab;
  const bool with_attention = bahdanau || luong;
  Tensor tokens({b, max_len}), weights({b, max_len, s});
  Tensor prev = Tensor::full({b, 1}, static_cast<real>(cfg_.bos_id));
  std::vector<uint8_t> finished(b, 0);
  int64_t steps = 0;
  while (steps < max_len) {
    const Seq2SeqOutput o = decode(prev, memory, state);  // one step: logits (B,1,V)
    bool all_done = true;
    for (int64_t r = 0; r < b; ++r) {
      const real* row = o.logits.value().data() + r * v;
      int64_t best = 0;
      for (int64_t k = 1; k < v; ++k)
        if (row[k] > row[best]) best = k;
      tokens[r * max_len + steps] = prev[r] = static_cast<real>(best);
      if (with_attention)
        for (int64_t j = 0; j < s; ++j)
          weights[(r * max_len + steps) * s + j] = o.attention.value()[r * s + j];
      finished[r] = finished[r] || best == cfg_.eos_id;
      all_done = all_done && finished[r];
    }
    ++steps;
    if (cfg_.eos_id >= 0 && all_done) break;
  }
  GreedyResult result;
  result.tokens = Tensor({b, steps});
  if (with_attention) result.attention = Tensor({b, steps, s});
  for (int64_t r = 0; r < b; ++r)
    for (int64_t t = 0; t < steps; ++t) {
      result.tokens[r * steps + t] = tokens[r * max_len + t];
      for (int64_t j = 0; with_attention && j < s; ++j)
        result.attention[(r * steps + t) * s + j] = weights[(r * max_len + t) * s + j];
    }
  return result;
}

}  // namespace attn::nn
