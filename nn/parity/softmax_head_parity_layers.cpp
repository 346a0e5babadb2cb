// Layer-table rows for the output heads over a large vocabulary: adaptive_log_softmax
// (PyTorch's nn.AdaptiveLogSoftmaxWithLoss). Parity: tests/parity/check_softmax_heads.py.
#include <memory>
#include <vector>

#include "autograd/functional.h"
#include "nn/parity/parity_layers.h"
#include "nn/softmax_heads/adaptive_softmax.h"

namespace attn::nn {

namespace {

// cutoffs from cutoff_1, cutoff_2, cutoff_3 (0 or absent: no such boundary).
std::vector<int64_t> read_cutoffs(LayerConfig& c) {
  std::vector<int64_t> cuts;
  const int64_t defaults[3] = {5, 12, 0};
  const char* keys[3] = {"cutoff_1", "cutoff_2", "cutoff_3"};
  for (int i = 0; i < 3; ++i)
    if (const int64_t v = c.get_int(keys[i], defaults[i]); v > 0) cuts.push_back(v);
  return cuts;
}

}  // namespace

std::vector<ParityLayerSpec> softmax_head_parity_layers() {
  std::vector<ParityLayerSpec> rows;
  rows.push_back(
      {"adaptive_log_softmax",
       "nn.AdaptiveLogSoftmaxWithLoss: in_features=8 n_classes=20 cutoff_1=5 cutoff_2=12 "
       "cutoff_3=(none) div_value=2 head_bias=false mode=log_prob|loss; inputs x (N,in), "
       "target (N) ids for mode=loss (y = the mean loss, shape (1))",
       [](LayerConfig& c, Generator& gen) {
         const int64_t in = c.get_int("in_features", 8), classes = c.get_int("n_classes", 20);
         const std::vector<int64_t> cuts = read_cutoffs(c);
         auto m = std::make_shared<AdaptiveLogSoftmax>(in, classes, cuts, gen,
                                                       c.get_double("div_value", 2.0),
                                                       c.get_bool("head_bias", false));
         const bool loss = c.get_choice("mode", "log_prob", {"log_prob", "loss"}) == "loss";
         return ParityLayer{m, [m, loss](LayerInputs& in) {
                              // the loss as shape (1): the exchange stores no rank-0 tensors
                              return loss ? reshape(m->loss(in.input("x"), in.indices("target")),
                                                    {1})
                                          : m->log_prob(in.input("x"));
                            }};
       },
       {{"log_prob", {{"mode", "log_prob"}}},
        {"log_prob_head_bias", {{"mode", "log_prob"}, {"head_bias", "true"}, {"cutoff_3", "16"}}},
        {"loss", {{"mode", "loss"}}}},
       [](LayerConfig& c, Generator& gen) {
         TensorMap in{{"x", Tensor::randn({6, c.get_int("in_features", 8)}, gen)}};
         if (c.get_choice("mode", "log_prob", {"log_prob", "loss"}) == "loss") {
           // targets in the shortlist and in both clusters of the default cutoffs (5, 12)
           const real ids[6] = {0, 6, 13, 3, 19, 8};
           Tensor target({6});
           for (int64_t i = 0; i < 6; ++i) target[i] = ids[i];
           in["target"] = target;
         }
         return in;
       }});
  return rows;
}

}  // namespace attn::nn
