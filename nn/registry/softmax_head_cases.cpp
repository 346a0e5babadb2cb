// Gradcheck rows for the vocabulary heads without a PyTorch twin: hierarchical softmax over a
// Huffman tree (nn/softmax_heads/huffman_softmax.h), its loss and its log-probabilities of
// every class. (adaptive_log_softmax has a twin: its rows come from the parity table.)
#include <memory>
#include <vector>

#include "nn/registry/layer_cases.h"
#include "nn/softmax_heads/huffman_softmax.h"

namespace attn::nn {

namespace {

// 7 classes with Zipf-like counts: depths 1 to 5, so the padded paths differ in length.
LayerCase huffman_case(const std::string& name, bool every_class) {
  return {name, [every_class](Generator& gen) {
            const std::vector<double> counts = {40, 20, 13, 10, 8, 7, 2};
            auto m = std::make_shared<HuffmanSoftmax>(4, counts, gen);
            perturb_parameters(*m, gen);
            Var h(Tensor::randn({5, 4}, gen), true);
            const Tensor targets = Tensor::from_vector({0, 6, 3, 5, 1});
            LayerInstance out;
            out.keep_alive = m;
            out.leaves = module_leaves(*m, {h});
            out.forward = [m, h, targets, every_class] {
              return every_class ? m->log_prob(h) : m->loss(h, targets);
            };
            return out;
          }};
}

}  // namespace

std::vector<LayerCase> softmax_head_layer_cases() {
  return {huffman_case("huffman_softmax/loss", false),
          huffman_case("huffman_softmax/log_prob", true)};
}

}  // namespace attn::nn
