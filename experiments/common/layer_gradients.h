// The gradient of a freshly initialised model, layer by layer: one batch through the train
// command's own model and data (train/run), one backward pass, and the norm of the gradient of
// each block's parameters.
//
//   train::TrainConfig tc;  tc.task = "charlm";  tc.model = "gpt";  tc.num_layers = 6;
//   std::vector<double> g = init_layer_gradient_norms(tc, "layers.", 6);   // g[0]: first block
//
// The model and the batch are the ones `attnlab train` would start from with the same config
// (same init and stream seeds), so the numbers describe step 1 of those runs.
#pragma once

#include <string>
#include <vector>

#include "nn/module.h"
#include "train/run/train_config.h"

namespace attn::experiments {

// ||grad|| over every parameter whose name starts with "<prefix><i>." for i = 0..layers-1:
// sqrt of the sum of squares of all their gradient entries.
std::vector<double> layer_gradient_norms(const nn::Module& model,
                                         const std::string& prefix,
                                         int64_t layers);

// Builds tc's model and first batch, runs loss.backward() once (no update), and returns
// layer_gradient_norms of the model.
std::vector<double> init_layer_gradient_norms(const train::TrainConfig& tc,
                                              const std::string& prefix,
                                              int64_t layers);

}  // namespace attn::experiments
