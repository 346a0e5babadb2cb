// Registry rows for the fused position and attention kernels: rope, blockwise attention,
// causal linear attention. Each PyTorch expression spells the computation out from primitives
// (PyTorch has no single function for any of them), so parity also checks our formulas.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "autograd/random_links.h"
#include "autograd/registry/registry.h"

namespace attn {

namespace {

// The RoPE angles (T, D/2) in float64 as a PyTorch expression: (start + t) * 10000^(-2i/D).
std::string torch_rope_angles(int64_t t, int64_t d, int64_t start) {
  return fmt::format(
      "(torch.arange({t}, dtype=torch.float64) + {s})[:, None] * 10000.0 ** (-torch.arange(0, "
      "{d}, 2, dtype=torch.float64) / {d})[None, :]",
      fmt::arg("t", t), fmt::arg("s", start), fmt::arg("d", d));
}

// RoPE in PyTorch, spelled out. Rotate-half: the halves (a, b) of x become
// (a cos - b sin, b cos + a sin); interleaved: the same on pairs (x[2i], x[2i+1]), re-interleaved.
std::string torch_rope(RopeStyle style, int64_t t, int64_t d, int64_t start) {
  const std::string pairs = style == RopeStyle::kRotateHalf
                                ? fmt::format("x[..., :{h}], x[..., {h}:]", fmt::arg("h", d / 2))
                                : "x[..., 0::2], x[..., 1::2]";
  const std::string join = style == RopeStyle::kRotateHalf
                               ? "torch.cat([a * c - b * s, b * c + a * s], -1)"
                               : "torch.stack([a * c - b * s, b * c + a * s], -1).flatten(-2)";
  return fmt::format(
      "(lambda ang, a, b: (lambda c, s: {})(ang.cos().float(), ang.sin().float()))"
      "({}, {})",
      join, torch_rope_angles(t, d, start), pairs);
}

// softmax(q k^T / sqrt(d)) v, optionally causal (the queries being the last tq of tk positions,
// so the hidden part is the triangle above diagonal tk - tq); k and v repeated per query head
// when there are fewer kv heads (GQA).
std::string torch_attention(int64_t tq, int64_t tk, int64_t d, int64_t group, bool causal) {
  const std::string kk = group > 1 ? fmt::format("k.repeat_interleave({}, 1)", group) : "k";
  const std::string vv = group > 1 ? fmt::format("v.repeat_interleave({}, 1)", group) : "v";
  const std::string scores = fmt::format("q @ {}.mT / math.sqrt({})", kk, d);
  if (!causal) return fmt::format("torch.softmax({}, -1) @ {}", scores, vv);
  return fmt::format(
      "torch.softmax(({}).masked_fill(torch.ones({}, {}, dtype=torch.bool).triu({}), "
      "float('-inf')), -1) @ {}",
      scores, tq, tk, 1 + tk - tq, vv);
}

OpCase rope_row(std::string name, RopeStyle style, int64_t start) {
  const int64_t t = 5, d = 6;
  return {std::move(name), torch_rope(style, t, d, start),
          [=](Generator& g) {
            return std::vector{float_input("x", Tensor::randn({2, 3, t, d}, g))};
          },
          [=](const std::vector<Var>& v) { return rope(v[0], start, style); }};
}

// q (2,hq,tq,4), k (2,hkv,tk,4), v (2,hkv,tk,3).
OpCase blockwise_row(
    std::string name, int64_t hq, int64_t hkv, int64_t tq, int64_t tk, bool causal, int64_t block) {
  const int64_t d = 4, dv = 3;
  return {std::move(name), torch_attention(tq, tk, d, hq / hkv, causal),
          [=](Generator& g) {
            return std::vector{float_input("q", Tensor::randn({2, hq, tq, d}, g)),
                               float_input("k", Tensor::randn({2, hkv, tk, d}, g)),
                               float_input("v", Tensor::randn({2, hkv, tk, dv}, g))};
          },
          [=](const std::vector<Var>& v) {
            return blockwise_attention(v[0], v[1], v[2], causal, block);
          }};
}

// q (2,2,t,4), k (2,2,t,4), v (2,2,t,3); PyTorch: dense attention with the scores outside the
// band filled with -inf (the band |i - j| <= w, causal 0 <= i - j <= w), except global rows and
// columns and per_row random links (drawn here with seed 3; PyTorch's mask opens the same
// (row, key) pairs, written out from the list).
OpCase banded_row(std::string name,
                  int64_t t,
                  int64_t window,
                  bool causal,
                  std::vector<int64_t> globals = {},
                  int64_t per_row = 0) {
  const int64_t d = 4, dv = 3;
  const RandomLinks links = draw_random_links(t, window, causal, globals, per_row, 3);
  const std::string band =
      causal ? fmt::format(
                   "(lambda r: (r[:, None] < r[None, :]) | (r[:, None] - r[None, :] > {}))"
                   "(torch.arange({}))",
                   window, t)
             : fmt::format("(lambda r: (r[:, None] - r[None, :]).abs() > {})(torch.arange({}))",
                           window, t);
  // Global tokens: their rows and columns are visible (causal: on or below the diagonal).
  std::string hidden = band;
  if (!globals.empty()) {
    const std::string g = fmt::format("torch.isin(torch.arange({}), torch.tensor([{}]))", t,
                                      fmt::join(globals, ", "));
    const std::string via = "(" + g + "[:, None] | " + g + "[None, :])";
    hidden = causal
                 ? fmt::format("({} & ~({} & torch.ones({}, {}).tril().bool()))", band, via, t, t)
                 : fmt::format("({} & ~{})", band, via);
  }
  std::vector<int64_t> link_rows, link_keys;
  for (int64_t i = 0; i < links.rows(); ++i)
    for (int64_t n = 0; n < links.per_row; ++n)
      if (links.key(i, n) >= 0) link_rows.push_back(i), link_keys.push_back(links.key(i, n));
  if (!link_rows.empty())
    hidden = fmt::format(
        "({} & ~torch.zeros({}, {}, dtype=torch.bool).index_put((torch.tensor([{}]), "
        "torch.tensor([{}])), torch.tensor(True)))",
        hidden, t, t, fmt::join(link_rows, ", "), fmt::join(link_keys, ", "));
  const std::string torch = fmt::format(
      "torch.softmax((q @ k.mT / math.sqrt({})).masked_fill({}, float('-inf')), -1) @ v", d,
      hidden);
  return {std::move(name), torch,
          [=](Generator& g) {
            return std::vector{float_input("q", Tensor::randn({2, 2, t, d}, g)),
                               float_input("k", Tensor::randn({2, 2, t, d}, g)),
                               float_input("v", Tensor::randn({2, 2, t, dv}, g))};
          },
          [=](const std::vector<Var>& v) {
            return banded_attention(v[0], v[1], v[2], window, causal, 0, globals, links);
          }};
}

// attention_weights on q (b,h,tq,4), k (b,hkv,tk,4): PyTorch's softmax of the scaled scores, for
// causal rows the future (above diagonal tk - tq) filled with -inf; k's heads repeated for grouped
// heads.
OpCase attention_weights_row(
    std::string name, int64_t b, int64_t h, int64_t tq, int64_t tk, bool causal, int64_t hkv = 0) {
  const int64_t d = 4, kv_heads = hkv > 0 ? hkv : h;
  const real scale = real(0.5);
  const std::string kk =
      kv_heads < h ? fmt::format("k.repeat_interleave({}, -3)", h / kv_heads) : "k";
  const std::string scores = fmt::format("(q @ {}.mT * {})", kk, scale);
  const std::string masked =
      causal ? fmt::format(
                   "{}.masked_fill(torch.ones({}, {}, dtype=torch.bool).triu({}), "
                   "float('-inf'))",
                   scores, tq, tk, 1 + tk - tq)
             : scores;
  return {std::move(name), fmt::format("torch.softmax({}, -1)", masked),
          [=](Generator& g) {
            return std::vector{float_input("q", Tensor::randn({b, h, tq, d}, g)),
                               float_input("k", Tensor::randn({b, kv_heads, tk, d}, g))};
          },
          [=](const std::vector<Var>& v) { return attention_weights(v[0], v[1], scale, causal); }};
}

// tril_matmul on a (b,m,k), b (b,k,3): a's upper part is random, so it must be ignored.
OpCase tril_matmul_row(std::string name, int64_t batch, int64_t m, int64_t k, int64_t diagonal) {
  return {std::move(name), fmt::format("a.tril({}) @ b", diagonal),
          [=](Generator& g) {
            return std::vector{float_input("a", Tensor::randn({batch, m, k}, g)),
                               float_input("b", Tensor::randn({batch, k, 3}, g))};
          },
          [=](const std::vector<Var>& v) { return tril_matmul(v[0], v[1], diagonal); }};
}

// Grouped heads: a (2,4,6,6) reads b (2,2,6,3), head h of a using head h / 2 of b.
OpCase tril_matmul_grouped_row() {
  return {"tril_matmul_grouped", "a.tril(0) @ b.repeat_interleave(2, -3)",
          [](Generator& g) {
            return std::vector{float_input("a", Tensor::randn({2, 4, 6, 6}, g)),
                               float_input("b", Tensor::randn({2, 2, 6, 3}, g))};
          },
          [](const std::vector<Var>& v) { return tril_matmul(v[0], v[1], 0); }};
}

}  // namespace

std::vector<OpCase> attention_op_cases() {
  std::vector<OpCase> rows;
  rows.push_back(rope_row("rope_rotate_half", RopeStyle::kRotateHalf, 3));
  rows.push_back(rope_row("rope_interleaved", RopeStyle::kInterleaved, 0));
  // T not a multiple of the block size; more keys than queries; causal crossing block edges.
  rows.push_back(blockwise_row("blockwise_attention", 2, 2, 7, 9, false, 3));
  rows.push_back(blockwise_row("blockwise_attention_causal", 2, 2, 7, 7, true, 3));
  rows.push_back(blockwise_row("blockwise_attention_one_block", 2, 2, 5, 5, true, 64));
  // Grouped-query heads (4 query heads on 2 kv heads), causal with a cache (3 new of 7 keys).
  rows.push_back(blockwise_row("blockwise_attention_gqa_cache", 4, 2, 3, 7, true, 2));
  // One block; a KV cache (3 new queries of 7 keys); 37 rows, three blocks of 16 with a ragged
  // last one, so rows cross block edges.
  // The band: both edges clipped (rows near 0 and T), a window wider than T, window 0.
  rows.push_back(banded_row("banded_attention", 9, 2, false));
  rows.push_back(banded_row("banded_attention_causal", 9, 3, true));
  rows.push_back(banded_row("banded_attention_wide", 4, 6, false));
  rows.push_back(banded_row("banded_attention_window0", 5, 0, true));
  rows.push_back(banded_row("banded_attention_global", 9, 1, false, {0, 6}));
  rows.push_back(banded_row("banded_attention_global_causal", 9, 1, true, {2, 8}));
  // BigBird: random links beside the band and global tokens (causal: only to the past).
  rows.push_back(banded_row("banded_attention_random", 9, 1, false, {}, 2));
  rows.push_back(banded_row("banded_attention_random_global", 10, 1, false, {0, 6}, 3));
  rows.push_back(banded_row("banded_attention_random_causal", 10, 1, true, {4}, 2));
  // Rows and keys over two of the op's 32-row blocks (the second ragged), with all three kinds.
  rows.push_back(banded_row("banded_attention_blocks", 40, 3, false, {5, 33}, 2));
  rows.push_back(attention_weights_row("attention_weights_causal", 2, 2, 5, 5, true));
  rows.push_back(attention_weights_row("attention_weights_causal_cache", 2, 2, 3, 7, true));
  rows.push_back(attention_weights_row("attention_weights_causal_blocks", 1, 2, 37, 37, true));
  rows.push_back(attention_weights_row("attention_weights_causal_gqa", 2, 4, 3, 6, true, 2));
  // Without a mask: more queries than keys is allowed; grouped heads.
  rows.push_back(attention_weights_row("attention_weights", 2, 2, 7, 5, false));
  rows.push_back(attention_weights_row("attention_weights_gqa", 2, 4, 5, 6, false, 2));
  rows.push_back(tril_matmul_row("tril_matmul", 2, 5, 5, 0));
  rows.push_back(tril_matmul_row("tril_matmul_wide", 2, 3, 7, 4));      // a KV cache's diagonal
  rows.push_back(tril_matmul_row("tril_matmul_below", 2, 6, 5, -2));    // rows that see nothing
  rows.push_back(tril_matmul_row("tril_matmul_blocks", 1, 35, 35, 0));  // three row blocks
  rows.push_back(tril_matmul_grouped_row());
  rows.push_back(
      {"causal_linear_attention",
       "(lambda a: (a @ v) / (a.sum(-1, keepdim=True) + 1e-6))((fq @ fk.mT).tril())",
       [](Generator& g) {
         // Feature maps are positive (elu+1 in LinearAttention); keep them away from 0.
         return std::vector{float_input("fq", Tensor::rand({2, 2, 6, 3}, g, 0.2, 1.5)),
                            float_input("fk", Tensor::rand({2, 2, 6, 3}, g, 0.2, 1.5)),
                            float_input("v", Tensor::randn({2, 2, 6, 4}, g))};
       },
       [](const std::vector<Var>& v) { return causal_linear_attention(v[0], v[1], v[2]); }});
  return rows;
}

}  // namespace attn
