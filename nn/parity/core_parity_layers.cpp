// nn-core's part of the layer table: the layers with a PyTorch twin (and feedforward).
#include "nn/parity/table_helpers.h"

namespace attn::nn {

std::vector<ParityLayerSpec> core_parity_layers() {
  std::vector<ParityLayerSpec> rows;
  for (auto table : {basic_parity_layers, attention_parity_layers, transformer_parity_layers})
    for (ParityLayerSpec& s : table()) rows.push_back(std::move(s));
  return rows;
}

}  // namespace attn::nn
