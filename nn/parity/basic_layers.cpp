// Layer-table rows for the single layers: linear, embedding, layer_norm, rms_norm.
#include <optional>

#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/norms.h"
#include "nn/parity/parity_layers.h"
#include "nn/parity/table_helpers.h"

namespace attn::nn {

std::vector<ParityLayerSpec> basic_parity_layers() {
  std::vector<ParityLayerSpec> rows;

  rows.push_back(
      {"linear",
       "nn.Linear: in_features=4 out_features=3 bias=true; input x (..., in)",
       [](LayerConfig& c, Generator& gen) {
         auto m =
             std::make_shared<Linear>(c.get_int("in_features", 4), c.get_int("out_features", 3),
                                      c.get_bool("bias", true), gen);
         return ParityLayer{m, [m](LayerInputs& in) { return m->forward(in.input("x")); }};
       },
       {{"bias", {{"in_features", "4"}, {"out_features", "3"}}},
        {"nobias", {{"in_features", "4"}, {"out_features", "3"}, {"bias", "false"}}}},
       [](LayerConfig& c, Generator& gen) {
         return TensorMap{{"x", Tensor::randn({2, 3, c.get_int("in_features", 4)}, gen)}};
       }});

  rows.push_back(
      {"embedding",
       "nn.Embedding: num_embeddings=10 embedding_dim=4 padding_idx=(none); input x (...) ids",
       [](LayerConfig& c, Generator& gen) {
         std::optional<int64_t> pad;
         if (c.has("padding_idx")) pad = c.get_int("padding_idx", 0);
         auto m = std::make_shared<Embedding>(c.get_int("num_embeddings", 10),
                                              c.get_int("embedding_dim", 4), gen, pad);
         return ParityLayer{m, [m](LayerInputs& in) { return m->forward(in.indices("x")); }};
       },
       // No padding_idx here: its row deliberately gets no gradient although the output depends
       // on it, which a finite-difference check would rightly flag (tests/nn cover it instead).
       {{"plain", {{"num_embeddings", "5"}, {"embedding_dim", "4"}}}},
       [](LayerConfig& c, Generator& gen) {
         return TensorMap{{"x", random_ids({2, 3}, c.get_int("num_embeddings", 10), gen)}};
       }});

  rows.push_back(
      {"layer_norm",
       "nn.LayerNorm: normalized_shape=4 eps=1e-5 elementwise_affine=true bias=true; input x",
       [](LayerConfig& c, Generator& gen) {
         auto m = std::make_shared<LayerNorm>(
             c.get_int("normalized_shape", 4), c.get_double("eps", 1e-5),
             c.get_bool("elementwise_affine", true), c.get_bool("bias", true));
         return ParityLayer{m, [m](LayerInputs& in) { return m->forward(in.input("x")); }};
       },
       {{"affine", {{"normalized_shape", "5"}}},
        {"no_affine", {{"normalized_shape", "5"}, {"elementwise_affine", "false"}}}},
       [](LayerConfig& c, Generator& gen) {
         return TensorMap{{"x", Tensor::randn({2, 3, c.get_int("normalized_shape", 4)}, gen)}};
       }});

  rows.push_back(
      {"rms_norm",
       "RMSNorm (nn.RMSNorm names): normalized_shape=4 eps=1e-6; input x",
       [](LayerConfig& c, Generator& gen) {
         auto m =
             std::make_shared<RMSNorm>(c.get_int("normalized_shape", 4), c.get_double("eps", 1e-6));
         return ParityLayer{m, [m](LayerInputs& in) { return m->forward(in.input("x")); }};
       },
       {{"plain", {{"normalized_shape", "5"}}}},
       [](LayerConfig& c, Generator& gen) {
         return TensorMap{{"x", Tensor::randn({2, 3, c.get_int("normalized_shape", 4)}, gen)}};
       }});
  return rows;
}

}  // namespace attn::nn
