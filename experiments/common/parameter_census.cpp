#include "experiments/common/parameter_census.h"

#include <set>
#include <sstream>

#include "experiments/kit/kit.h"

namespace attn::experiments {

namespace {

std::vector<std::string> segments(const std::string& dotted) {
  std::vector<std::string> out;
  std::stringstream ss(dotted);
  for (std::string s; std::getline(ss, s, '.');) out.push_back(s);
  return out;
}

bool any_of(const std::vector<std::string>& segs, const std::set<std::string>& names) {
  for (const auto& s : segs)
    if (names.count(s)) return true;
  return false;
}

// The module that owns the parameter: "linear1" in "layers.0.linear1.weight".
std::string owner(const std::vector<std::string>& segs) {
  return segs.size() >= 2 ? segs[segs.size() - 2] : "";
}

}  // namespace

const std::string& component_name(Component c) {
  static const std::array<std::string, kNumComponents> names{
      "Q", "K", "V", "O", "FFN", "norms", "embeddings", "output head", "other"};
  return names[static_cast<size_t>(c)];
}

int64_t ComponentCounts::total() const {
  int64_t t = 0;
  for (int64_t x : n) t += x;
  return t;
}

ComponentCounts& ComponentCounts::operator+=(const ComponentCounts& o) {
  for (size_t i = 0; i < kNumComponents; ++i) n[i] += o.n[i];
  return *this;
}

Component classify_parameter(const std::string& name) {
  const auto segs = segments(name);
  if (segs.empty()) return Component::kOther;
  // The head first: BERT's MLM head has its own dense layer and norm.
  if (any_of(segs, {"lm_head", "mlm_head", "classifier", "head"})) return Component::kHead;
  if (segs.back().rfind("in_proj", 0) == 0) return Component::kQ;  // split by the caller
  const std::string mod = owner(segs);
  if (mod == "q_proj" || mod == "wq") return Component::kQ;
  if (mod == "k_proj" || mod == "wk") return Component::kK;
  if (mod == "v_proj" || mod == "wv") return Component::kV;
  if (mod == "out_proj" || mod == "wo") return Component::kO;
  if (any_of({mod}, {"linear1", "linear2", "w1", "w2", "w3"})) return Component::kFFN;
  for (const auto& s : segs)
    if (s.find("norm") != std::string::npos) return Component::kNorms;
  for (const auto& s : segs)
    if (s.find("emb") != std::string::npos) return Component::kEmbeddings;
  return Component::kOther;
}

ComponentCounts count_by_component(const nn::Module& m) {
  ComponentCounts c;
  for (const auto& [name, p] : m.named_parameters()) {
    const int64_t n = p.value().numel();
    if (segments(name).back().rfind("in_proj", 0) == 0 &&
        classify_parameter(name) == Component::kQ) {
      // PyTorch's packed [W_q; W_k; W_v] (3E, E) or [b_q; b_k; b_v] (3E): three equal thirds.
      if (n % 3 != 0)
        throw Error("parameter census: '" + name + "' has " + std::to_string(n) +
                    " entries, not three equal parts");
      c[Component::kQ] += n / 3;
      c[Component::kK] += n / 3;
      c[Component::kV] += n / 3;
    } else {
      c[classify_parameter(name)] += n;
    }
  }
  return c;
}

ComponentCounts encoder_layer_formula(const StandardBlockSize& s) {
  const int64_t d = s.d_model, b = s.bias ? 1 : 0;
  ComponentCounts c;
  c[Component::kQ] = c[Component::kK] = c[Component::kV] = c[Component::kO] = d * d + b * d;
  c[Component::kFFN] = 2 * d * s.d_ff + b * (s.d_ff + d);
  c[Component::kNorms] = 2 * (d + b * d);  // LayerNorm: gain (and bias) per norm
  return c;
}

ComponentCounts decoder_layer_formula(const StandardBlockSize& s) {
  ComponentCounts c = encoder_layer_formula(s);
  const int64_t d = s.d_model, b = s.bias ? 1 : 0;
  for (Component p : {Component::kQ, Component::kK, Component::kV, Component::kO})
    c[p] += d * d + b * d;            // cross-attention's projections
  c[Component::kNorms] += d + b * d;  // norm3
  return c;
}

ComponentCounts seq2seq_formula(const Seq2SeqSize& s) {
  ComponentCounts c;
  for (int64_t i = 0; i < s.encoder_layers; ++i) c += encoder_layer_formula(s.block);
  for (int64_t i = 0; i < s.decoder_layers; ++i) c += decoder_layer_formula(s.block);
  const int64_t d = s.block.d_model, b = s.block.bias ? 1 : 0;
  c[Component::kNorms] += 2 * (d + b * d);  // encoder.norm, decoder.norm
  c[Component::kEmbeddings] += (s.src_vocab + s.tgt_vocab) * d;
  if (!s.tie_output) c[Component::kHead] += d * s.tgt_vocab + s.tgt_vocab;  // lm_head has a bias
  return c;
}

ComponentCounts llama_block_formula(const LlamaBlockSize& s) {
  const int64_t d = s.dim, kv = s.n_kv_heads * (s.dim / s.n_heads);
  ComponentCounts c;
  c[Component::kQ] = c[Component::kO] = d * d;
  c[Component::kK] = c[Component::kV] = kv * d;
  c[Component::kFFN] = 3 * s.hidden * d;
  c[Component::kNorms] = 2 * d;
  return c;
}

}  // namespace attn::experiments
