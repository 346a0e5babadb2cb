// The parts attention-zoo and linear-zoo share (attention_zoo.cpp, linear_zoo.cpp): choosing
// variants from --variants, one MixerModel per variant, part 1 (held-out accuracy on recall and
// a long-range task at equal steps) and part 2 (time per training step and peak memory against
// T, growth exponents), with their tables, results and figures.
//
//   const std::vector<ZooVariant> vs = zoo::chosen_variants(cfg, all, "linear-zoo");
//   zoo::Accuracies a = zoo::accuracy_part(cfg, ctx, vs, /*probe=*/{});
//   zoo::Costs c = zoo::cost_part(cfg, ctx, vs);
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "data/task.h"
#include "experiments/efficient/attention_zoo_claims.h"

namespace attn::experiments::zoo {

// --variants: "" = all, else comma-separated names of `all`, each known and given once; a
// UsageError names the experiment otherwise.
std::vector<ZooVariant> chosen_variants(const Config& cfg,
                                        const std::vector<ZooVariant>& all,
                                        const std::string& experiment);

// The notes that open both zoos: the variants and the model body (`positions`: what the
// variants use for positions), then every variant's mixer parameters.
void models_note(const Config& cfg,
                 RunContext& ctx,
                 const std::vector<ZooVariant>& vs,
                 const std::string& positions);

// What a probe sees of a model: each layer's mixer module and, while recording, the inputs the
// mixers were given (one per layer per forward, in order).
struct MixerTap {
  std::vector<std::shared_ptr<nn::Module>> modules;
  std::vector<Tensor> inputs;
  bool recording = false;
};

// A MixerModel for variant v at length t (d_model, nhead, num_layers from cfg; the variant's
// body from zoo_body). With a tap, every mixer records its module and its inputs there.
std::unique_ptr<MixerModel> build_model(const ZooVariant& v,
                                        const Config& cfg,
                                        int64_t vocab,
                                        int64_t t,
                                        int64_t classes,
                                        Generator& gen,
                                        MixerTap* tap = nullptr);

// Trains v on task for `steps` (kit::train_classifier), returns held-out accuracy on
// --eval_size fresh examples and ms per step; with a tap the trained model is handed back (and
// accuracy_part keeps the tap beside it).
struct Trained {
  double accuracy = 0, ms_per_step = 0;
  std::unique_ptr<MixerModel> model;
  std::unique_ptr<MixerTap> tap;
};
Trained train_and_eval(const ZooVariant& v,
                       const Config& cfg,
                       const data::Task& task,
                       int64_t steps,
                       uint64_t seed,
                       MixerTap* tap = nullptr);

// Called after a variant's recall model is trained, with the model, its tap and the task.
using RecallProbe =
    std::function<void(size_t variant, const MixerModel&, MixerTap&, const data::Task&)>;

// Part 1 (section, table, results, figure); the probe (if any) reads each trained recall model.
// The ablations are trained on recall beside them, their accuracies only returned (a.ablations).
Accuracies accuracy_part(const Config& cfg,
                         RunContext& ctx,
                         const std::vector<ZooVariant>& vs,
                         const RecallProbe& probe,
                         const std::vector<ZooVariant>& ablations = {});
// Part 2 (section, tables, results, figures).
Costs cost_part(const Config& cfg, RunContext& ctx, const std::vector<ZooVariant>& vs);

// The settings both zoos take (tasks, steps, lengths, timing, model, optimiser, evaluation),
// with their defaults, and the checks on them.
void add_zoo_fields(Config& config);
void check_zoo_fields(const Config& cfg, const std::string& experiment);

}  // namespace attn::experiments::zoo
