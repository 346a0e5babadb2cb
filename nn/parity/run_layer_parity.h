// The engine of `attnlab parity`: one layer, PyTorch's weights and inputs in, outputs and every
// gradient out.
//
//   attnlab parity encoder_layer --config d_model=8 nhead=2 norm_first=true
//       --weights W.safetensors --inputs I.safetensors --out O.safetensors
//   // = attn::nn::run_layer_parity("encoder_layer", {{"d_model","8"}, ...}, W, I, O)
//
// Steps: build the layer from the config (nn/parity/parity_layers.h; names and defaults as the
// PyTorch twin), switch it to eval (no dropout), load W strictly (every parameter, nothing else,
// same shapes), read the inputs from I — x (and memory, masks, ids, as the layer takes them) and
// gy, the upstream gradient shaped like the output — run forward, set loss = sum(y * gy), run
// backward, and write to O:
//   y                  the output
//   grad.<input>       for every float input (grad.x, grad.memory, ...)
//   grad.<parameter>   for every parameter, by its state_dict name (zeros if it got none)
//   plus any extra outputs of the layer (e.g. attn_weights for mha).
// Unknown layer, bad or unknown config keys, missing tensors, wrong shapes: attn::UsageError
// naming the culprit (the CLI exits with 2). Returns 0 on success.
#pragma once

#include <map>
#include <string>

namespace attn::nn {

int run_layer_parity(const std::string& layer,
                     const std::map<std::string, std::string>& config,
                     const std::string& weights,
                     const std::string& inputs,
                     const std::string& out);

}  // namespace attn::nn
