// Registry rows for fused_attention: heads read in place from (B,T,C) projection outputs. The
// PyTorch side slices the heads out, runs plain attention (k and v repeated per query head for
// grouped heads) and merges the heads back, so parity checks the layout as well as the math.
//
// Layouts: one packed (B,T,3E) self-attention input; a query input and one key/value input
// (cross-attention; the query columns start at 1, so x's column 0 gets no gradient); keys and
// values reading the same columns of one tensor (their gradients add). Sizes: B Hkv >= 8 takes
// the one-job-per-key-head backward on up to 4 threads, B Hkv = 1 the two-pass one.
// Dropout rows: the kernel draws its mask from a fresh Generator(kDropoutSeed); PyTorch gets the
// 0/1 mask dropout(weights) draws from the same generator state as an input (`keep`), so parity
// also checks that the kernel's mask is the dropout op's.
#include <fmt/format.h>

#include "autograd/ops/fused/fused_dropout.h"
#include "autograd/registry/registry.h"

namespace attn {

namespace {

enum class Layout { kPacked, kCross, kSameColumns };

struct FusedRow {
  int64_t b, h, hkv, tq, tk, d, dv;
  bool causal;
  Layout layout;
  bool weights = false;  // the row's output: the weights instead of the attention's output
  real dropout = 0;      // dropout of the weights (training)
};

constexpr real kScale = real(0.5);

// x[..., col : col + heads * width] as (B, heads, T, width), repeated per query head when grouped.
std::string torch_heads(
    const std::string& x, int64_t col, int64_t heads, int64_t width, int64_t repeat) {
  std::string s = fmt::format("{}[..., {}:{}].unflatten(-1, ({}, {})).transpose(1, 2)", x, col,
                              col + heads * width, heads, width);
  return repeat > 1 ? fmt::format("{}.repeat_interleave({}, 1)", s, repeat) : s;
}

FusedAttentionSpec spec_of(const FusedRow& r) {
  FusedAttentionSpec s{.heads = r.h,
                       .kv_heads = r.hkv,
                       .head_dim = r.d,
                       .v_head_dim = r.dv,
                       .scale = kScale,
                       .causal = r.causal};
  switch (r.layout) {
    case Layout::kPacked:
      s.k_col = r.h * r.d, s.v_col = s.k_col + r.hkv * r.d;
      break;
    case Layout::kCross:
      s.q_col = 1, s.v_col = r.hkv * r.d;
      break;
    case Layout::kSameColumns:
      break;
  }
  return s;
}

OpCase fused_row(std::string name, const FusedRow& r) {
  const FusedAttentionSpec s = spec_of(r);
  const int64_t g = r.h / r.hkv;
  const bool one_input = r.layout == Layout::kPacked;
  const std::string qsrc = "x", kvsrc = one_input ? "x" : "m";
  const std::string q = torch_heads(qsrc, s.q_col, r.h, r.d, 1);
  const std::string k = torch_heads(kvsrc, s.k_col, r.hkv, r.d, g);
  const std::string v = torch_heads(kvsrc, s.v_col, r.hkv, r.dv, g);
  std::string scores = fmt::format("(q @ k.mT * {})", kScale);
  if (r.causal)
    scores =
        fmt::format("{}.masked_fill(torch.ones({}, {}, dtype=torch.bool).triu({}), float('-inf'))",
                    scores, r.tq, r.tk, 1 + r.tk - r.tq);
  std::string mixed = fmt::format("torch.softmax({}, -1)", scores);
  if (r.dropout > 0) mixed = fmt::format("({} * keep / (1 - {}))", mixed, r.dropout);
  const std::string body =
      r.weights ? mixed : fmt::format("({} @ v).transpose(1, 2).flatten(2)", mixed);
  const std::string torch = fmt::format("(lambda q, k, v: {})({}, {}, {})", body, q, k, v);
  const int64_t q_cols = one_input ? s.v_col + r.hkv * r.dv : s.q_col + r.h * r.d;
  const int64_t kv_cols = r.layout == Layout::kCross ? s.v_col + r.hkv * r.dv : r.hkv * r.d;
  return {std::move(name), torch,
          [=](Generator& gen) {
            std::vector<CaseInput> in{float_input("x", Tensor::randn({r.b, r.tq, q_cols}, gen))};
            if (!one_input)
              in.push_back(float_input("m", Tensor::randn({r.b, r.tk, kv_cols}, gen)));
            if (r.dropout > 0)
              in.push_back(mask_input(
                  "keep", dropout_keep_mask({r.b, r.h, r.tq, r.tk}, r.dropout, kDropoutSeed)));
            return in;
          },
          [=](const std::vector<Var>& v) {  // keep (the last input, if any) is only for PyTorch
            const Var& kv = one_input ? v[0] : v[1];
            Generator fresh(kDropoutSeed);
            FusedAttentionOutput a =
                fused_attention(v[0], kv, kv, s, {.p = r.dropout, .gen = &fresh});
            return r.weights ? a.weights : a.out;
          }};
}

}  // namespace

std::vector<OpCase> fused_attention_op_cases() {
  std::vector<OpCase> rows;
  rows.push_back(fused_row("fused_attention", {2, 4, 4, 5, 5, 4, 4, false, Layout::kPacked}));
  rows.push_back(fused_row("fused_attention_causal", {2, 4, 4, 6, 6, 4, 4, true, Layout::kPacked}));
  // Grouped heads over a cache (3 new queries of 7 keys), values narrower than keys.
  rows.push_back(
      fused_row("fused_attention_cross_gqa", {4, 4, 2, 3, 7, 4, 3, true, Layout::kCross}));
  rows.push_back(fused_row("fused_attention_cross", {2, 4, 4, 9, 5, 3, 2, false, Layout::kCross}));
  rows.push_back(fused_row("fused_attention_same_columns",
                           {2, 4, 4, 5, 5, 3, 3, false, Layout::kSameColumns}));
  rows.push_back(fused_row("fused_attention_weights",
                           {2, 4, 4, 6, 6, 4, 4, true, Layout::kPacked, /*weights=*/true}));
  // One head of one batch entry: the two-pass backward; 37 rows cross 4-row blocks.
  rows.push_back(
      fused_row("fused_attention_two_pass", {1, 1, 1, 37, 37, 4, 4, true, Layout::kPacked}));
  rows.push_back(
      fused_row("fused_attention_two_pass_gqa", {1, 2, 1, 5, 11, 4, 3, true, Layout::kCross}));
  // Dropout of the weights: causal with one job per key head; the two-pass backward with grouped
  // heads over a cache and rows of an odd length (masks starting inside Philox's 4-word blocks).
  rows.push_back(fused_row("fused_attention_dropout",
                           {2, 4, 4, 6, 6, 4, 4, true, Layout::kPacked, false, real(0.3)}));
  rows.push_back(fused_row("fused_attention_dropout_two_pass_gqa",
                           {1, 2, 1, 5, 11, 4, 3, true, Layout::kCross, false, real(0.3)}));
  return rows;
}

}  // namespace attn
