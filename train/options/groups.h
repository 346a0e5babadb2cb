// The shared groups of fields: one name, one meaning, one range for each setting that more than
// one experiment (or `attnlab train`) has. An experiment declares the members of a group it uses
// and only its own fields by hand; --help lists each group under its heading.
//
//   using namespace attn::train::options;
//   Config cfg;
//   add_model_fields(cfg, {.d_model = 64, .nhead = 4, .num_layers = 2, .dim_ff = 256});
//   add_optimizer_fields(cfg, {.steps = 600, .batch_size = 32, .lr = 3e-3, .warmup = 50});
//   add_seed_field(cfg, 1);
//   cfg.set("num-layers", "4");
//   const ModelSettings model = read_model(cfg);           // model.num_layers == 4
//   const OptimizerSettings opt = read_optimizer(cfg);     // opt.schedule == "constant"
//   check_model(cfg);                                      // nhead must divide d_model, ...
//
// A member left unset in the defaults is not declared (no flag that does nothing); reading it
// gives the settings' neutral value (0 for a size, "constant" schedule, no warm-up, no weight
// decay, no clipping) — except steps, batch_size and lr, which read_optimizer requires.
//
// The names are the ones `attnlab train` has always used (which users already type), PyTorch's
// where it has one: d_model, nhead, num_layers, dim_feedforward -> dim_ff (shorter, and train's),
// dropout, batch_size, lr, weight_decay. `--threads` is no field: it is an option of both
// commands (attnlab run/train --help list it under "Run options").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "train/options/config.h"

namespace attn::train::options {

inline constexpr const char* kModelHeading = "Model";
inline constexpr const char* kOptimizerHeading = "Optimizer and schedule";
inline constexpr const char* kDataHeading = "Data";
inline constexpr const char* kEvalHeading = "Evaluation and stopping";
inline constexpr const char* kSeedHeading = "Seed";

// ---- model: the transformer's (and the recurrent models') sizes --------------------------------
struct ModelDefaults {
  std::optional<int64_t> d_model;     // token vector width
  std::optional<int64_t> nhead;       // attention heads (divide d_model)
  std::optional<int64_t> n_kv_heads;  // key/value heads: 0 = nhead (MHA), 1 = MQA, else GQA
  std::optional<int64_t> num_layers;  // layers per stack
  std::optional<int64_t> dim_ff;      // feed-forward inner width
  std::optional<double> dropout;      // dropout probability, [0, 1)
  std::optional<int64_t> hidden;      // recurrent hidden size
};
struct ModelSettings {
  int64_t d_model = 0;
  int64_t nhead = 0;
  int64_t n_kv_heads = 0;
  int64_t num_layers = 0;
  int64_t dim_ff = 0;
  double dropout = 0;
  int64_t hidden = 0;
};
void add_model_fields(Config& cfg, const ModelDefaults& defaults);
ModelSettings read_model(const Config& cfg);
// The cross-field rules of the declared members: nhead divides d_model, n_kv_heads divides nhead.
void check_model(const Config& cfg);

// ---- optimizer (AdamW) and learning-rate schedule -----------------------------------------------
struct OptimizerDefaults {
  std::optional<int64_t> steps;         // optimizer steps (at most)
  std::optional<int64_t> batch_size;    // examples per step
  std::optional<double> lr;             // peak learning rate, > 0
  std::optional<std::string> schedule;  // schedule_names()
  std::optional<int64_t> warmup;        // warm-up steps
  std::optional<double> weight_decay;   // AdamW decoupled weight decay
  std::optional<double> clip;           // global gradient-norm clip (0: off)
};
struct OptimizerSettings {
  int64_t steps = 0;
  int64_t batch_size = 0;
  double lr = 0;
  std::string schedule = "constant";
  int64_t warmup = 0;
  double weight_decay = 0;
  double clip = 0;
};
// constant warmup noam cosine (train/schedule.h).
const std::vector<std::string>& schedule_names();
void add_optimizer_fields(Config& cfg, const OptimizerDefaults& defaults);
// attn::Error if steps, batch_size or lr is not declared.
OptimizerSettings read_optimizer(const Config& cfg);
// noam needs warmup > 0; cosine needs steps > warmup (of the declared members).
void check_optimizer(const Config& cfg);

// ---- data: training and held-out sequence lengths -----------------------------------------------
struct DataDefaults {
  std::optional<int64_t> min_len;       // shortest training sequence
  std::optional<int64_t> max_len;       // longest training sequence
  std::optional<int64_t> eval_min_len;  // shortest held-out sequence
  std::optional<int64_t> eval_max_len;  // longest held-out sequence
  std::optional<int64_t> seq_len;       // fixed sequence length
  std::optional<int64_t> block_len;     // language-model window
};
struct DataSettings {
  int64_t min_len = 0;
  int64_t max_len = 0;
  int64_t eval_min_len = 0;
  int64_t eval_max_len = 0;
  int64_t seq_len = 0;
  int64_t block_len = 0;
};
void add_data_fields(Config& cfg, const DataDefaults& defaults);
DataSettings read_data(const Config& cfg);
// max_len >= min_len and eval_max_len >= eval_min_len (of the declared members).
void check_data(const Config& cfg);

// ---- evaluation and stopping
// ---------------------------------------------------------------------
struct EvalDefaults {
  std::optional<int64_t> eval_size;   // held-out examples
  std::optional<int64_t> eval_every;  // steps between evaluations (0: only at the end)
  std::optional<double> target;       // stop once the main metric reaches this (0: never)
  std::optional<double> max_seconds;  // stop after this much wall time (0: no limit)
};
struct EvalSettings {
  int64_t eval_size = 0;
  int64_t eval_every = 0;
  double target = 0;
  double max_seconds = 0;
};
void add_eval_fields(Config& cfg, const EvalDefaults& defaults);
EvalSettings read_eval(const Config& cfg);

// ---- seed
// ---------------------------------------------------------------------------------------- `seed`,
// >= 0. Every experiment has one (the registry adds it when the experiment does not).
void add_seed_field(Config& cfg,
                    int64_t default_seed = 0,
                    const std::string& help = "random seed (weights, data)");
uint64_t read_seed(const Config& cfg);

}  // namespace attn::train::options
