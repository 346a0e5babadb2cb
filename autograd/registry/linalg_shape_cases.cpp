// Registry rows for matmul and the shape ops (reshape, transpose, permute, concat, ...).
#include "autograd/ops/fused/fused_dropout.h"
#include "autograd/registry/registry.h"

namespace attn {

namespace {

// 0/1 entries, each 1 with probability 1/2: conditions and masks for where / masked_fill.
Tensor coin_flips(const Shape& shape, Generator& g) {
  Tensor m = Tensor::empty(shape);
  for (int64_t i = 0; i < m.numel(); ++i) m[i] = g.uniform() < 0.5 ? 1 : 0;
  return m;
}

}  // namespace

std::vector<OpCase> linalg_shape_cases() {
  std::vector<OpCase> rows;
  auto mm = [&](std::string name, Shape sa, Shape sb, bool ta, bool tb, std::string torch,
                real alpha = 1) {
    rows.push_back(
        {std::move(name), std::move(torch),
         [sa, sb](Generator& g) {
           return std::vector{float_input("a", Tensor::randn(sa, g)),
                              float_input("b", Tensor::randn(sb, g))};
         },
         [ta, tb, alpha](const std::vector<Var>& v) { return matmul(v[0], v[1], ta, tb, alpha); }});
  };
  mm("matmul_2d", {3, 4}, {4, 5}, false, false, "a @ b");
  mm("matmul_2d_ta", {4, 3}, {4, 5}, true, false, "a.mT @ b");
  mm("matmul_2d_tb", {3, 4}, {5, 4}, false, true, "a @ b.mT");
  mm("matmul_2d_ta_tb", {4, 3}, {5, 4}, true, true, "a.mT @ b.mT");
  mm("matmul_batched3", {2, 3, 4}, {2, 4, 5}, false, false, "a @ b");
  mm("matmul_batched4_tb", {2, 2, 3, 4}, {2, 2, 5, 4}, false, true, "a @ b.mT");
  mm("matmul_batched3_ta", {2, 4, 3}, {2, 4, 5}, true, false, "a.mT @ b");
  mm("matmul_shared_b", {2, 3, 4}, {4, 5}, false, false, "a @ b");
  mm("matmul_shared_b_tb", {2, 3, 4}, {5, 4}, false, true, "a @ b.mT");
  mm("matmul_shared_b_ta", {2, 4, 3}, {4, 5}, true, false, "a.mT @ b");
  // alpha, the GEMM's scale (attention's 1/sqrt(d)): batched and shared-b paths, both directions.
  mm("matmul_batched4_tb_alpha", {2, 2, 3, 4}, {2, 2, 5, 4}, false, true, "0.375 * (a @ b.mT)",
     0.375);
  mm("matmul_shared_b_ta_alpha", {2, 4, 3}, {4, 5}, true, false, "-1.5 * (a.mT @ b)", -1.5);
  mm("matmul_shared_b_alpha", {2, 3, 4}, {5, 4}, false, true, "0.25 * (a @ b.mT)", 0.25);

  // linear: x (..., in) W^T + b with the bias inside the GEMM; rank-3, rank-1 and bias-less.
  // linear_relu: the same followed by ReLU, fused (random inputs keep the pre-activations far
  // from the kink at 0 relative to the finite-difference step). gelu_linear: GELU (exact or
  // tanh) on the input first, fused.
  enum class Act { kNone, kReLU, kGelu, kGeluTanh };
  auto lin = [&](std::string name, Shape sx, int64_t out, bool bias, Act act = Act::kNone) {
    const int64_t in = sx.back();
    const std::string x = act == Act::kGelu ? "torch.nn.functional.gelu(x)"
                          : act == Act::kGeluTanh
                              ? "torch.nn.functional.gelu(x, approximate='tanh')"
                              : "x";
    std::string torch = bias ? "torch.nn.functional.linear(" + x + ", w, b)" : x + " @ w.mT";
    if (act == Act::kReLU) torch = "torch.relu(" + torch + ")";
    rows.push_back({std::move(name), std::move(torch),
                    [sx, in, out, bias](Generator& g) {
                      std::vector in_list{float_input("x", Tensor::randn(sx, g)),
                                          float_input("w", Tensor::randn({out, in}, g))};
                      if (bias) in_list.push_back(float_input("b", Tensor::randn({out}, g)));
                      return in_list;
                    },
                    [act](const std::vector<Var>& v) {
                      const std::optional<Var> b =
                          v.size() == 3 ? std::optional(v[2]) : std::nullopt;
                      switch (act) {
                        case Act::kReLU:
                          return linear_relu(v[0], v[1], b);
                        case Act::kGelu:
                          return gelu_linear(v[0], v[1], b);
                        case Act::kGeluTanh:
                          return gelu_linear(v[0], v[1], b, GeluApprox::kTanh);
                        case Act::kNone:
                          break;
                      }
                      return linear(v[0], v[1], b);
                    }});
  };
  lin("linear_bias", {2, 3, 4}, 5, true);
  lin("linear_vector_input", {4}, 3, true);
  lin("linear_no_bias", {3, 4}, 2, false);
  lin("linear_relu", {2, 3, 4}, 5, true, Act::kReLU);
  lin("linear_relu_no_bias", {3, 4}, 3, false, Act::kReLU);
  lin("gelu_linear", {2, 3, 4}, 5, true, Act::kGelu);
  lin("gelu_linear_tanh_no_bias", {3, 4}, 3, false, Act::kGeluTanh);
  // Enough rows (21, 20) for the panel kernel (kernels/panel_gemm.h) instead of BLAS, with
  // partial register blocks in rows (not a multiple of 6) and columns (not of 16); gelu_linear's
  // input has 20 columns, whole vectors of GELU and a tail.
  lin("linear_panel_rows", {3, 7, 20}, 19, true);
  lin("linear_relu_panel_rows", {4, 5, 18}, 17, true, Act::kReLU);
  lin("gelu_linear_panel_rows", {3, 7, 20}, 19, true, Act::kGelu);
  lin("gelu_linear_tanh_panel_rows", {4, 5, 18}, 17, true, Act::kGeluTanh);
  // gelu_linear with dropout of GELU(x) (ops/fused/fused_dropout.h): PyTorch gets the 0/1 mask
  // dropout(gelu(x)) draws from a fresh Generator(kDropoutSeed) as `keep`.
  rows.push_back(
      {"gelu_linear_dropout",
       "torch.nn.functional.linear(torch.nn.functional.gelu(x) * keep / (1 - 0.3), w, b)",
       [](Generator& g) {
         return std::vector{float_input("x", Tensor::randn({3, 7, 20}, g)),
                            float_input("w", Tensor::randn({19, 20}, g)),
                            float_input("b", Tensor::randn({19}, g)),
                            mask_input("keep", dropout_keep_mask({3, 7, 20}, 0.3, kDropoutSeed))};
       },
       [](const std::vector<Var>& v) {  // keep (v[3]) is only for PyTorch
         Generator fresh(kDropoutSeed);
         return gelu_linear(v[0], v[1], v[2], GeluApprox::kNone, {.p = real(0.3), .gen = &fresh});
       }});

  // One float input x of shape s, transformed by f.
  auto unary = [&](std::string name, Shape s, std::string torch, std::function<Var(Var)> f) {
    rows.push_back(
        {std::move(name), std::move(torch),
         [s](Generator& g) { return std::vector{float_input("x", Tensor::randn(s, g))}; },
         [f](const std::vector<Var>& v) { return f(v[0]); }});
  };
  unary("reshape", {2, 3, 4}, "x.reshape(4, -1)", [](Var x) { return reshape(x, {4, -1}); });
  unary("reshape_flatten", {2, 3, 2}, "x.reshape(-1)", [](Var x) { return reshape(x, {-1}); });
  unary("transpose_2d", {3, 4}, "x.mT", [](Var x) { return transpose(x); });
  unary("transpose_4d", {2, 2, 3, 4}, "x.transpose(-1, -2)", [](Var x) { return transpose(x); });
  unary("permute_3d", {2, 3, 4}, "x.permute(2, 0, 1)", [](Var x) { return permute(x, {2, 0, 1}); });
  unary("permute_4d_heads", {2, 3, 2, 4}, "x.permute(0, 2, 1, 3)", [](Var x) {
    return permute(x, {0, 2, 1, 3});
  });
  unary("permute_negative_dims", {2, 3, 4}, "x.permute(0, -1, 1)", [](Var x) {
    return permute(x, {0, -1, 1});
  });
  unary("slice_middle_axis", {3, 5, 2}, "x[:, 1:4]", [](Var x) { return slice(x, 1, 1, 4); });
  unary("slice_first_axis", {4, 3}, "x[1:3]", [](Var x) { return slice(x, 0, 1, 3); });
  unary("slice_negative_range", {3, 6}, "x[:, -3:-1]", [](Var x) { return slice(x, -1, -3, -1); });
  // The head split of attention: columns [2, 8) of (2,3,10) as 2 heads of 3, and all columns.
  unary("head_slice", {2, 3, 10}, "x[..., 2:8].unflatten(-1, (2, 3)).transpose(1, 2)",
        [](Var x) { return head_slice(x, 2, 2, 8); });
  unary("head_slice_all_columns", {2, 4, 6}, "x.unflatten(-1, (3, 2)).transpose(1, 2)",
        [](Var x) { return head_slice(x, 3, 0, 6); });

  // Several float inputs named a, b, c, ... with the given shapes, joined by f.
  auto many = [&](std::string name, std::vector<Shape> shapes, std::string torch,
                  std::function<Var(const std::vector<Var>&)> f) {
    rows.push_back(
        {std::move(name), std::move(torch),
         [shapes](Generator& g) {
           std::vector<CaseInput> in;
           for (size_t i = 0; i < shapes.size(); ++i)
             in.push_back(float_input(std::string(1, char('a' + i)), Tensor::randn(shapes[i], g)));
           return in;
         },
         std::move(f)});
  };
  many("concat_last_axis", {{2, 3}, {2, 2}}, "torch.cat([a, b], 1)",
       [](const std::vector<Var>& v) { return concat(v, 1); });
  many("concat_first_axis_3", {{1, 2, 3}, {2, 2, 3}, {1, 2, 3}}, "torch.cat([a, b, c], 0)",
       [](const std::vector<Var>& v) { return concat(v, 0); });
  many("concat_same_input_twice", {{2, 3}}, "torch.cat([a, a], -1)", [](const std::vector<Var>& v) {
    return concat({v[0], v[0]}, -1);
  });
  many("stack_new_first_axis", {{2, 3}, {2, 3}}, "torch.stack([a, b], 0)",
       [](const std::vector<Var>& v) { return stack(v, 0); });
  many("stack_new_middle_axis", {{2, 3}, {2, 3}, {2, 3}}, "torch.stack([a, b, c], 1)",
       [](const std::vector<Var>& v) { return stack(v, 1); });
  many("stack_new_last_axis", {{3, 2}, {3, 2}}, "torch.stack([a, b], -1)",
       [](const std::vector<Var>& v) { return stack(v, -1); });

  rows.push_back({"where_broadcast", "torch.where(c, a, b)",
                  [](Generator& g) {
                    return std::vector{mask_input("c", coin_flips({3, 1}, g)),
                                       float_input("a", Tensor::randn({2, 3, 4}, g)),
                                       float_input("b", Tensor::randn({4}, g))};
                  },
                  [](const std::vector<Var>& v) { return where(v[0].value(), v[1], v[2]); }});
  rows.push_back({"where_same_shape", "torch.where(c, a, b)",
                  [](Generator& g) {
                    return std::vector{mask_input("c", coin_flips({3, 4}, g)),
                                       float_input("a", Tensor::randn({3, 4}, g)),
                                       float_input("b", Tensor::randn({3, 4}, g))};
                  },
                  [](const std::vector<Var>& v) { return where(v[0].value(), v[1], v[2]); }});
  rows.push_back({"masked_fill_broadcast", "x.masked_fill(m, -1e9)",
                  [](Generator& g) {
                    return std::vector{float_input("x", Tensor::randn({2, 3, 4}, g)),
                                       mask_input("m", coin_flips({3, 4}, g))};
                  },
                  [](const std::vector<Var>& v) { return masked_fill(v[0], v[1].value(), -1e9); }});
  rows.push_back({"masked_fill_causal", "x.masked_fill(m, -1e9)",
                  [](Generator& g) {
                    Tensor causal({1, 1, 3, 3});  // 1 above the diagonal: future positions
                    for (int64_t i = 0; i < 3; ++i)
                      for (int64_t j = i + 1; j < 3; ++j) causal.at({0, 0, i, j}) = 1;
                    return std::vector{float_input("x", Tensor::randn({2, 2, 3, 3}, g)),
                                       mask_input("m", causal)};
                  },
                  [](const std::vector<Var>& v) { return masked_fill(v[0], v[1].value(), -1e9); }});
  return rows;
}

}  // namespace attn
