// titans-memory's models, their training and the probes of the memory's write rule
// (experiments/efficient/titans_memory.h).
#include <cmath>

#include "experiments/efficient/titans_memory.h"
#include "experiments/kit/classifier_steps.h"
#include "experiments/kit/kit.h"
#include "experiments/kit/spread.h"
#include "nn/attention/titans_variants.h"

namespace attn::experiments {

namespace {

// Two mixers per model; the factory also collects each layer's memory for the probes.
Mixer titans_mixer(const TitansVariant& v,
                   const Config& cfg,
                   std::vector<const nn::LongTermMemory*>& memories,
                   Generator& gen) {
  const int64_t d = cfg.get_int("d_model"), h = cfg.get_int("nhead");
  const int64_t segment = cfg.get_int("segment"), window = cfg.get_int("window");
  const int64_t hidden = cfg.get_int("memory_hidden");
  if (v.placement == Placement::kWindowOnly) return window_mixer(d, h, window, true, gen);
  const auto with_memory = [&memories](auto m) {  // m: a shared_ptr to a Titans layer
    memories.push_back(m.get());
    return Mixer{m, [m](const Var& x) { return m->forward(x); }};
  };
  if (v.placement == Placement::kContext)
    return with_memory(
        std::make_shared<nn::TitansMemoryAttention>(nn::TitansOptions{.d_model = d,
                                                                      .nhead = h,
                                                                      .segment = segment,
                                                                      .persistent = 2,
                                                                      .memory_depth = v.depth,
                                                                      .memory_hidden = hidden},
                                                    gen));
  const nn::TitansHybridOptions o{.d_model = d,
                                  .nhead = h,
                                  .segment = segment,
                                  .window = window,
                                  .memory_depth = v.depth,
                                  .memory_hidden = hidden};
  if (v.placement == Placement::kGate)
    return with_memory(std::make_shared<nn::TitansGateAttention>(o, gen));
  return with_memory(std::make_shared<nn::TitansLayerAttention>(o, gen));
}

double pearson(const std::vector<double>& x, const std::vector<double>& y) {
  const double mx = kit::mean_of(x), my = kit::mean_of(y);
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0;
}

}  // namespace

std::vector<TitansVariant> titans_variants() {
  return {{"window-only", Placement::kWindowOnly, 0}, {"mac-linear", Placement::kContext, 1},
          {"mac-deep", Placement::kContext, 2},       {"mag-linear", Placement::kGate, 1},
          {"mag-deep", Placement::kGate, 2},          {"mal-linear", Placement::kLayer, 1},
          {"mal-deep", Placement::kLayer, 2}};
}

data::RecallTask titans_task(const Config& cfg) {
  return data::RecallTask({.num_pairs = cfg.get_int("pairs")});
}

double titans_accuracy(MixerModel& m, const data::RecallTask& task, int64_t n, uint64_t seed) {
  Generator gen(seed);
  return kit::class_accuracy(m, kit::class_batches(task, n, 250, gen));
}

TrainedTitans train_titans(const TitansVariant& v,
                           const Config& cfg,
                           const RunContext& ctx,
                           uint64_t seed) {
  const data::RecallTask task = titans_task(cfg);
  Generator init(seed), data_gen(seed * 7 + 1);
  TrainedTitans t;
  const int64_t len = task.max_src_len();
  t.model = std::make_unique<MixerModel>(
      MixerModelOptions{.vocab = task.tokenizer().vocab_size(),
                        .max_len = len,
                        .d_model = cfg.get_int("d_model"),
                        .layers = cfg.get_int("num_layers"),
                        .classes = task.num_classes()},
      [&](int64_t, Generator& g) { return titans_mixer(v, cfg, t.memories, g); }, init);
  const train::FitSettings s =
      kit::fit_settings(ctx, fmt::format("{}-seed{}", v.name, seed), read_optimizer(cfg));
  MixerModel& m = *t.model;
  train::fit(m, s, [&](const train::BatchPart& part) {
    return kit::class_loss(m, kit::class_batch(task, s.batch_size, data_gen), part);
  });
  t.accuracy = titans_accuracy(m, task, cfg.get_int("eval_size"), seed * 7 + 2);
  return t;
}

SurpriseProbe probe_surprise(const TrainedTitans& t,
                             const data::RecallTask& task,
                             int64_t n,
                             uint64_t seed) {
  std::vector<std::vector<nn::MemoryWriteRecord>> records(t.memories.size());
  for (size_t l = 0; l < t.memories.size(); ++l) t.memories[l]->trace_writes(&records[l]);
  {
    NoGrad off;
    Generator gen(seed);
    for (const kit::ClassBatch& b : kit::class_batches(task, n, 250, gen)) t.model->forward(b.ids);
  }
  SurpriseProbe p;
  for (size_t l = 0; l < t.memories.size(); ++l) {
    t.memories[l]->trace_writes(nullptr);
    std::vector<double> loss, update;
    for (const nn::MemoryWriteRecord& r : records[l]) {
      loss.insert(loss.end(), r.loss_before.begin(), r.loss_before.end());
      update.insert(update.end(), r.update_norm.begin(), r.update_norm.end());
    }
    p.correlation += pearson(loss, update) / static_cast<double>(t.memories.size());
    p.writes = static_cast<int64_t>(loss.size());
  }
  return p;
}

double recall_with_forgetting(
    TrainedTitans& t, const data::RecallTask& task, int64_t n, uint64_t seed, double alpha) {
  std::vector<real> learned;
  for (const nn::LongTermMemory* m : t.memories) {
    Var logit = m->alpha_logit;  // shares the parameter's value
    learned.push_back(logit.value()[0]);
    logit.value()[0] = static_cast<real>(std::log(alpha / (1 - alpha)));
  }
  const double acc = titans_accuracy(*t.model, task, n, seed);
  for (size_t l = 0; l < t.memories.size(); ++l) {
    Var logit = t.memories[l]->alpha_logit;
    logit.value()[0] = learned[l];
  }
  return acc;
}

}  // namespace attn::experiments
