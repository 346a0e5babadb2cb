// Registry rows for the fused network ops: softmax, norms, embedding, dropout, losses.
#include "autograd/registry/registry.h"

namespace attn {

namespace {

// Whole numbers drawn uniformly from [0, n), as class ids or token ids.
Tensor random_ids(const Shape& shape, int64_t n, Generator& g) {
  Tensor t = Tensor::empty(shape);
  for (int64_t i = 0; i < t.numel(); ++i) t[i] = static_cast<real>(g.randint(n));
  return t;
}

}  // namespace

std::vector<OpCase> nn_op_cases() {
  std::vector<OpCase> rows;
  rows.push_back({"softmax", "torch.softmax(x, -1)",
                  [](Generator& g) {
                    return std::vector{float_input("x", Tensor::randn({2, 3, 5}, g, 2.0))};
                  },
                  [](const std::vector<Var>& v) { return softmax(v[0]); }});

  // masked_softmax against PyTorch's masked_fill + softmax: a mask broadcast over batch and
  // query rows (key padding), a rank-2 causal mask, and a row with every position masked.
  auto masked = [&](std::string name, Shape x_shape, Tensor mask) {
    rows.push_back({std::move(name), "torch.softmax(x.masked_fill(m, -1e9), -1)",
                    [x_shape, mask](Generator& g) {
                      return std::vector{float_input("x", Tensor::randn(x_shape, g, 2.0)),
                                         mask_input("m", mask)};
                    },
                    [](const std::vector<Var>& v) { return masked_softmax(v[0], v[1].value()); }});
  };
  masked("masked_softmax_key_padding", {2, 3, 4, 5},
         Tensor::from_vector({2, 1, 1, 5}, {0, 0, 1, 0, 1, 1, 0, 0, 0, 0}));
  Tensor causal({4, 4});  // 1 above the diagonal: the future
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = i + 1; j < 4; ++j) causal.at({i, j}) = 1;
  masked("masked_softmax_causal", {2, 2, 4, 4}, causal);
  masked("masked_softmax_all_masked_row", {2, 3, 5},
         Tensor::from_vector({3, 5}, {0, 1, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1}));

  // x (stddev s) of shape `shape`, plus float parameters w (and b) of extent shape.back().
  auto with_params = [&](std::string name, Shape shape, double s, int n_params, std::string torch,
                         std::function<Var(const std::vector<Var>&)> f) {
    rows.push_back({std::move(name), std::move(torch),
                    [shape, s, n_params](Generator& g) {
                      std::vector<CaseInput> in{float_input("x", Tensor::randn(shape, g, s))};
                      const Shape c{shape.back()};
                      if (n_params >= 1)
                        in.push_back(float_input("w", Tensor::rand(c, g, 0.5, 1.5)));
                      if (n_params >= 2) in.push_back(float_input("b", Tensor::randn(c, g)));
                      return in;
                    },
                    std::move(f)});
  };
  auto only_x = [](Var (*op)(const Var&)) {
    return [op](const std::vector<Var>& v) { return op(v[0]); };
  };
  with_params("log_softmax", {2, 3, 5}, 2.0, 0, "torch.log_softmax(x, -1)", only_x(log_softmax));
  with_params("log_softmax_large_logits", {3, 4}, 30.0, 0, "torch.log_softmax(x, -1)",
              only_x(log_softmax));
  with_params("layer_norm", {2, 3, 5}, 1.0, 2, "F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)",
              [](const std::vector<Var>& v) { return layer_norm(v[0], v[1], v[2], 1e-5); });
  with_params("layer_norm_2d", {4, 6}, 3.0, 2, "F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)",
              [](const std::vector<Var>& v) { return layer_norm(v[0], v[1], v[2], 1e-5); });
  // Rows of 64: the four-vector reductions of the float build (kernels/row_stats.h).
  with_params("layer_norm_wide", {3, 64}, 3.0, 2, "F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)",
              [](const std::vector<Var>& v) { return layer_norm(v[0], v[1], v[2], 1e-5); });
  with_params("rms_norm", {2, 3, 5}, 1.0, 1,
              "x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w",
              [](const std::vector<Var>& v) { return rms_norm(v[0], v[1], 1e-6); });
  with_params("rms_norm_2d", {4, 6}, 2.0, 1,
              "x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w",
              [](const std::vector<Var>& v) { return rms_norm(v[0], v[1], 1e-5); });

  rows.push_back(
      {"embedding", "F.embedding(i, w)",
       [](Generator& g) {
         Tensor ids = random_ids({2, 4}, 6, g);
         ids[5] = ids[1];  // a repeated id: its gradient rows must add up
         return std::vector{float_input("w", Tensor::randn({6, 3}, g)), index_input("i", ids)};
       },
       [](const std::vector<Var>& v) { return embedding(v[0], v[1].value()); }});

  with_params("dropout_eval", {3, 4}, 1.0, 0, "F.dropout(x, 0.5, training=False)",
              [](const std::vector<Var>& v) {
                Generator fresh(kDropoutSeed);
                return dropout(v[0], 0.5, fresh, false);
              });
  with_params("dropout_p0", {3, 4}, 1.0, 0, "F.dropout(x, 0.0)", [](const std::vector<Var>& v) {
    Generator fresh(kDropoutSeed);
    return dropout(v[0], 0.0, fresh, true);
  });
  rows.push_back({"dropout_p03_same_mask", "x * keep / (1 - 0.3)",
                  [](Generator& g) {
                    return std::vector{
                        float_input("x", Tensor::randn({4, 5}, g)),
                        mask_input("keep", dropout_keep_mask({4, 5}, 0.3, kDropoutSeed))};
                  },
                  [](const std::vector<Var>& v) {  // v[1] (keep) is only for PyTorch
                    Generator fresh(kDropoutSeed);
                    return dropout(v[0], 0.3, fresh, true);
                  }});

  // Cross-entropy: logits of shape `shape`, targets of its leading shape. `ignored` lists flat
  // target positions set to ignore_index.
  auto ce = [&](std::string name, Shape shape, int64_t ignore, real smoothing,
                std::vector<int64_t> ignored, std::string torch) {
    rows.push_back(
        {std::move(name), std::move(torch),
         [shape, ignore, ignored](Generator& g) {
           const Shape lead(shape.begin(), shape.end() - 1);
           Tensor t = random_ids(lead, shape.back(), g);
           for (int64_t p : ignored) t[p] = static_cast<real>(ignore);
           return std::vector{float_input("x", Tensor::randn(shape, g, 2.0)), index_input("t", t)};
         },
         [ignore, smoothing](const std::vector<Var>& v) {
           return cross_entropy(v[0], v[1].value(), ignore, smoothing);
         }});
  };
  const std::string flat = "F.cross_entropy(x.reshape(-1, x.shape[-1]), t.reshape(-1)";
  ce("cross_entropy_2d", {5, 4}, -100, 0, {}, "F.cross_entropy(x, t)");
  ce("cross_entropy_2d_ignore_hits", {6, 4}, -100, 0, {1, 4}, "F.cross_entropy(x, t)");
  ce("cross_entropy_2d_ignore_0", {6, 4}, 0, 0, {2}, "F.cross_entropy(x, t, ignore_index=0)");
  ce("cross_entropy_2d_smoothing", {5, 4}, -100, 0.1, {},
     "F.cross_entropy(x, t, label_smoothing=0.1)");
  ce("cross_entropy_3d", {2, 3, 4}, -100, 0, {}, flat + ")");
  ce("cross_entropy_3d_ignore_smoothing", {2, 3, 5}, 0, 0.1, {0, 4},
     flat + ", ignore_index=0, label_smoothing=0.1)");
  ce("cross_entropy_3d_smoothing_no_hits", {2, 3, 5}, -100, 0.25, {},
     flat + ", label_smoothing=0.25)");

  rows.push_back({"mse_loss", "F.mse_loss(a, b)",
                  [](Generator& g) {
                    return std::vector{float_input("a", Tensor::randn({3, 4}, g)),
                                       float_input("b", Tensor::randn({3, 4}, g))};
                  },
                  [](const std::vector<Var>& v) { return mse_loss(v[0], v[1]); }});
  return rows;
}

}  // namespace attn
