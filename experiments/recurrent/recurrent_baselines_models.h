// recurrent-baselines' models (experiments/recurrent/recurrent_baselines.cpp): which models the
// run compares, and each one trained through train::train_task for the wall-time budget, then
// reloaded from its checkpoint and scored by greedy decoding at every source length.
//
//   std::vector<baselines::ModelSpec> specs = baselines::parse_models("lstm:none,transformer");
//   baselines::Outcome o = baselines::train_and_score(specs[0], cfg, lengths, seed, folder);
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "experiments/config.h"
#include "train/run/run_train.h"

namespace attn::experiments::baselines {

// One model of the comparison: a recurrent cell with an attention kind, or the transformer.
struct ModelSpec {
  std::string model;       // rnn gru lstm transformer
  std::string attention;   // none bahdanau luong_dot luong_general; empty for the transformer
  std::string positional;  // the transformer's --positional (empty: its own, sinusoidal)
  std::string variant() const { return attention.empty() ? positional : attention; }
  std::string label() const { return variant().empty() ? model : model + "+" + variant(); }
  std::string key() const { return variant().empty() ? model : model + "_" + variant(); }
};

// "rnn:none,lstm:bahdanau,transformer,transformer:rope" -> specs. A bare cell name means no
// attention; after "transformer:" comes a positional scheme (nn/positional/position_kind.h).
std::vector<ModelSpec> parse_models(const std::string& text);

// What one model produced.
struct Outcome {
  ModelSpec spec;
  std::string positional;  // the scheme it trained with (train_task's rule for auto)
  int64_t params = 0;
  train::TrainSummary summary;
  double final_loss = 0;                                // mean training loss of the last 50 steps
  std::vector<double> exact, token;                     // per entry of --lengths
  std::vector<double> curve_s, curve_step, curve_loss;  // training loss vs seconds and steps
  double exact_in = 0, exact_beyond = 0;                // means over trained / longer lengths
  double token_in = 0, token_beyond = 0;
  double exact_long = 0;  // mean over the upper half of the trained lengths
};

// The sub-run of one model in the folder `out`.
train::TrainConfig train_config(const ModelSpec& spec,
                                const Config& cfg,
                                const std::vector<int64_t>& lengths,
                                uint64_t seed,
                                const std::filesystem::path& out);

// Trains the model into root/<key>, reloads it and scores it at every length.
Outcome train_and_score(const ModelSpec& spec,
                        const Config& cfg,
                        const std::vector<int64_t>& lengths,
                        uint64_t seed,
                        const std::filesystem::path& root);

}  // namespace attn::experiments::baselines
