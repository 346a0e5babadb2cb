#include "experiments/interpretability/ffn_memory_keys.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/mode.h"
#include "data/batch.h"
#include "experiments/kit/chunks.h"
#include "nn/feedforward.h"

namespace attn::experiments {

namespace {

void check_readable(const nn::DecoderOnlyTransformer& gpt) {
  const nn::DecoderOnlyOptions& o = gpt.options();
  if (!o.norm_first || !o.feedforward || !o.layer_norm || !gpt.pos_emb || !gpt.norm ||
      o.attention_window > 0)
    throw Error(
        "ffn-memory: the key-value reading needs pre-norm blocks with a feed-forward, layer "
        "norms and learned positions");
}

// One batch of windows: the last block's key activations (B*T, d_ff) and the largest gap
// between the logits rebuilt from the parts and the model's own forward.
//   a = x + SA(LN1(x));  m = act(linear1(LN2(a)));  y = a + linear2(m);  logits = E LN(y)
struct BatchKeys {
  Tensor act;
  double gap = 0, max_logit = 0;
};
BatchKeys batch_keys(nn::DecoderOnlyTransformer& gpt, const Tensor& ids) {
  nn::AttentionMasks causal;
  causal.causal = true;
  Var x = gpt.pos_emb->forward(gpt.tok_emb->forward(ids), 0);
  const size_t last = gpt.layers->size() - 1;
  for (size_t i = 0; i < last; ++i) x = (*gpt.layers)[i].forward(x, causal);
  auto& block = (*gpt.layers)[last];
  const Var n1 = block.norm1->forward(x);
  const Var a = add(x, block.self_attn->forward(n1, n1, n1, causal).out);
  const Var m =
      nn::activate(block.linear1->forward(block.norm2->forward(a)), gpt.options().activation);
  const Var y = gpt.norm->forward(add(a, block.linear2->forward(m)));
  const Tensor rebuilt =
      (gpt.lm_head ? gpt.lm_head->forward(y) : matmul(y, gpt.tok_emb->weight, false, true)).value();
  const Tensor logits = gpt.forward(ids).value();
  BatchKeys out{m.value(), 0, 0};
  for (int64_t i = 0; i < logits.numel(); ++i) {
    out.gap = std::max(out.gap, static_cast<double>(std::abs(logits[i] - rebuilt[i])));
    out.max_logit = std::max(out.max_logit, static_cast<double>(std::abs(logits[i])));
  }
  return out;
}

}  // namespace

KeyActivations last_block_keys(nn::DecoderOnlyTransformer& gpt,
                               const std::vector<data::Example>& windows) {
  check_readable(gpt);
  if (windows.empty()) throw Error("ffn-memory: no held-out window to read the keys on");
  NoGrad off;
  gpt.eval();
  const auto t = static_cast<int64_t>(windows[0].src.size());
  const int64_t d_ff = gpt.options().dim_feedforward;
  KeyActivations a{Tensor({static_cast<int64_t>(windows.size()) * t, d_ff}), {}, t, 0, 0};
  real* rows = a.act.data();  // where the next batch's rows go
  for (const auto& part : kit::chunks(windows, 32)) {
    const data::Batch b = data::collate_language_model(part);
    if (b.tgt_in.size(1) != t) throw Error("ffn-memory: held-out windows of unequal length");
    const BatchKeys k = batch_keys(gpt, b.tgt_in);
    rows = std::copy(k.act.data(), k.act.data() + k.act.numel(), rows);
    for (int64_t i = 0; i < b.tgt_out.numel(); ++i)
      a.next.push_back(static_cast<int64_t>(b.tgt_out[i]));
    a.rebuild_gap = std::max(a.rebuild_gap, k.gap);
    a.max_logit = std::max(a.max_logit, k.max_logit);
  }
  gpt.train();
  return a;
}

Tensor value_logits(const nn::DecoderOnlyTransformer& gpt) {
  check_readable(gpt);
  const auto& block = (*gpt.layers)[gpt.layers->size() - 1];
  const Tensor& w2 = block.linear2->weight.value();  // (d, d_ff): column i is v_i
  const Tensor& gamma = gpt.norm->weight.value();    // (d)
  const Tensor& e = (gpt.lm_head ? gpt.lm_head->weight : gpt.tok_emb->weight).value();  // (V,d)
  const int64_t d = w2.size(0), d_ff = w2.size(1), v = e.size(0);
  Tensor out({d_ff, v});
  std::vector<double> u(static_cast<size_t>(d));
  for (int64_t i = 0; i < d_ff; ++i) {
    double mean = 0;
    for (int64_t j = 0; j < d; ++j) mean += w2[j * d_ff + i] / static_cast<double>(d);
    for (int64_t j = 0; j < d; ++j) u[j] = gamma[j] * (w2[j * d_ff + i] - mean);
    for (int64_t c = 0; c < v; ++c) {
      double s = 0;
      for (int64_t j = 0; j < d; ++j) s += e[c * d + j] * u[j];
      out[i * v + c] = static_cast<real>(s);
    }
  }
  return out;
}

namespace {

// The indices of the k largest of xs[0..n), largest first (ties to the lower index).
std::vector<int64_t> top_k(const std::function<double(int64_t)>& xs, int64_t n, int64_t k) {
  std::vector<int64_t> idx(static_cast<size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  k = std::min(k, n);
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int64_t p, int64_t q) {
    return xs(p) > xs(q) || (xs(p) == xs(q) && p < q);
  });
  idx.resize(static_cast<size_t>(k));
  return idx;
}

// The share of key `reader`'s contexts whose next character is one `writer`'s value promotes.
double agreement_of(const KeyReading& reader, const KeyReading& writer, const KeyActivations& a) {
  int64_t hits = 0;
  for (int64_t r : reader.rows)
    hits += std::count(writer.promoted.begin(), writer.promoted.end(), a.next[r]) > 0;
  return static_cast<double>(hits) / static_cast<double>(reader.rows.size());
}

}  // namespace

std::vector<KeyReading> read_top_keys(const KeyActivations& a,
                                      const Tensor& value_logits,
                                      const std::vector<bool>& is_char,
                                      const KeyReadingOptions& o) {
  const int64_t n = a.act.size(0), d_ff = a.act.size(1), v = value_logits.size(1);
  if (static_cast<int64_t>(is_char.size()) != v)
    throw Error("ffn-memory: is_char must hold one flag per vocabulary entry");
  std::vector<KeyReading> all(static_cast<size_t>(d_ff));
  for (int64_t i = 0; i < d_ff; ++i) {
    KeyReading& k = all[static_cast<size_t>(i)];
    k.key = i;
    k.rows = top_k([&](int64_t r) { return a.act[r * d_ff + i]; }, n, o.contexts);
    for (int64_t r : k.rows) k.strength += a.act[r * d_ff + i] / static_cast<double>(k.rows.size());
  }
  const std::vector<int64_t> strongest =
      top_k([&](int64_t i) { return all[static_cast<size_t>(i)].strength; }, d_ff, o.keys);
  std::vector<KeyReading> keys;
  for (int64_t i : strongest) {
    KeyReading k = all[static_cast<size_t>(i)];
    k.promoted = top_k(
        [&](int64_t c) {
          return is_char[static_cast<size_t>(c)] ? static_cast<double>(value_logits[i * v + c])
                                                 : -HUGE_VAL;
        },
        v, o.promoted);
    k.agreement = agreement_of(k, k, a);
    keys.push_back(std::move(k));
  }
  return keys;
}

Agreement agreement_against_shuffled(const std::vector<KeyReading>& keys,
                                     const KeyActivations& a,
                                     int64_t shuffles,
                                     Generator& gen) {
  if (keys.size() < 2) throw Error("ffn-memory: shuffling values needs at least two keys");
  Agreement g;
  for (const KeyReading& k : keys) g.ours += k.agreement / static_cast<double>(keys.size());
  std::vector<double> rates;
  std::vector<size_t> deal(keys.size());
  for (int64_t s = 0; s < shuffles; ++s) {
    // Sattolo's algorithm: a uniformly random cyclic permutation, so no key keeps its value.
    std::iota(deal.begin(), deal.end(), size_t{0});
    for (size_t i = deal.size() - 1; i > 0; --i)
      std::swap(deal[i], deal[static_cast<size_t>(gen.randint(static_cast<int64_t>(i)))]);
    double rate = 0;
    for (size_t i = 0; i < keys.size(); ++i)
      rate += agreement_of(keys[i], keys[deal[i]], a) / static_cast<double>(keys.size());
    rates.push_back(rate);
  }
  g.shuffled = kit::spread_of(rates);
  return g;
}

}  // namespace attn::experiments
