// Registry rows for the fused position and attention kernels: rope, blockwise attention,
// causal linear attention. Each PyTorch expression spells the computation out from primitives
// (PyTorch has no single function for any of them), so parity also checks our formulas.
#include <fmt/format.h>

#include "autograd/registry/registry.h"

namespace attn {

namespace {

// Rotate-half RoPE in PyTorch: angles (T, D/2) in float64, the two halves of x swapped and
// negated for the sine term.
std::string torch_rope_rotate_half(int64_t t, int64_t d, int64_t start) {
  return fmt::format(
      "(lambda ang: x * torch.cat([ang.cos(), ang.cos()], -1).float()"
      " + torch.cat([-x[..., {h}:], x[..., :{h}]], -1) * torch.cat([ang.sin(), ang.sin()], -1)"
      ".float())((torch.arange({t}, dtype=torch.float64) + {s})[:, None]"
      " * 10000.0 ** (-torch.arange(0, {d}, 2, dtype=torch.float64) / {d})[None, :])",
      fmt::arg("h", d / 2), fmt::arg("t", t), fmt::arg("s", start), fmt::arg("d", d));
}

// Interleaved RoPE in PyTorch: pairs (x[2i], x[2i+1]) rotated, then re-interleaved.
std::string torch_rope_interleaved(int64_t t, int64_t d, int64_t start) {
  return fmt::format(
      "(lambda c, s, a, b: torch.stack([a * c - b * s, b * c + a * s], -1).flatten(-2))("
      "*(lambda ang: (ang.cos().float(), ang.sin().float()))((torch.arange({t}, "
      "dtype=torch.float64) + {s})[:, None] * 10000.0 ** (-torch.arange(0, {d}, 2, "
      "dtype=torch.float64) / {d})[None, :]), x[..., 0::2], x[..., 1::2])",
      fmt::arg("t", t), fmt::arg("s", start), fmt::arg("d", d));
}

// softmax(q k^T / sqrt(d)) v, optionally with the strictly-upper triangle set to -inf.
std::string torch_attention(int64_t t, int64_t d, bool causal) {
  const std::string scores = fmt::format("q @ k.mT / math.sqrt({})", d);
  if (!causal) return fmt::format("torch.softmax({}, -1) @ v", scores);
  return fmt::format(
      "torch.softmax(({}).masked_fill(torch.ones({t}, {t}, dtype=torch.bool).triu(1), "
      "float('-inf')), -1) @ v",
      scores, fmt::arg("t", t));
}

OpCase rope_row(std::string name, RopeStyle style, int64_t start) {
  const int64_t t = 5, d = 6;
  std::string torch = style == RopeStyle::kRotateHalf ? torch_rope_rotate_half(t, d, start)
                                                      : torch_rope_interleaved(t, d, start);
  return {std::move(name), std::move(torch),
          [=](Generator& g) {
            return std::vector{float_input("x", Tensor::randn({2, 3, t, d}, g))};
          },
          [=](const std::vector<Var>& v) { return rope(v[0], start, style); }};
}

OpCase blockwise_row(std::string name, int64_t tq, int64_t tk, bool causal, int64_t block) {
  const int64_t d = 4, dv = 3;
  return {std::move(name), torch_attention(tk, d, causal),
          [=](Generator& g) {
            return std::vector{float_input("q", Tensor::randn({2, 2, tq, d}, g)),
                               float_input("k", Tensor::randn({2, 2, tk, d}, g)),
                               float_input("v", Tensor::randn({2, 2, tk, dv}, g))};
          },
          [=](const std::vector<Var>& v) {
            return blockwise_attention(v[0], v[1], v[2], causal, block);
          }};
}

}  // namespace

std::vector<OpCase> attention_op_cases() {
  std::vector<OpCase> rows;
  rows.push_back(rope_row("rope_rotate_half", RopeStyle::kRotateHalf, 3));
  rows.push_back(rope_row("rope_interleaved", RopeStyle::kInterleaved, 0));
  // T not a multiple of the block size; more keys than queries; causal crossing block edges.
  rows.push_back(blockwise_row("blockwise_attention", 7, 9, false, 3));
  rows.push_back(blockwise_row("blockwise_attention_causal", 7, 7, true, 3));
  rows.push_back(blockwise_row("blockwise_attention_one_block", 5, 5, true, 64));
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
