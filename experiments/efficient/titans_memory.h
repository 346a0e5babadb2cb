// titans-memory's parts shared by its two files: the models it trains (Titans' three placements
// of the long-term memory, each with a linear and a deep memory, and sliding-window attention
// alone), one trained model per variant and seed, and the probes of the memory's write rule.
//
//   std::vector<TitansVariant> vs = titans_variants();
//   TrainedTitans t = train_titans(vs[0], cfg, ctx, seed);   // t.accuracy, t.memories
//   SurpriseProbe p = probe_surprise(t, task, 500, gen);      // r(update, loss before write)
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "data/tasks/recall.h"
#include "experiments/common/mixer_model.h"
#include "experiments/run_context.h"
#include "nn/attention/titans_memory.h"
#include "train/options/config.h"

namespace attn::experiments {

enum class Placement { kWindowOnly, kContext, kGate, kLayer };

struct TitansVariant {
  std::string name;     // "mag-deep", ...
  Placement placement;  // where the memory enters
  int64_t depth = 0;    // 1: linear memory, 2: MLP memory, 0: none (window only)
};
std::vector<TitansVariant> titans_variants();

struct TrainedTitans {
  std::unique_ptr<MixerModel> model;
  std::vector<const nn::LongTermMemory*> memories;  // one per layer (owned by model)
  double accuracy = 0;                              // held-out recall
};
data::RecallTask titans_task(const Config& cfg);
TrainedTitans train_titans(const TitansVariant& v,
                           const Config& cfg,
                           const RunContext& ctx,
                           uint64_t seed);
double titans_accuracy(MixerModel& m, const data::RecallTask& task, int64_t n, uint64_t seed);

// The surprise rule on held-out sequences: for every memory write (every layer, segment and
// sequence), the associative loss of the segment's pairs before the write against the size of
// the write ||M' - M||_F; their Pearson correlation, pooled per layer and averaged.
struct SurpriseProbe {
  double correlation = 0;  // mean over layers of r(loss before, update norm)
  int64_t writes = 0;      // per layer
};
SurpriseProbe probe_surprise(const TrainedTitans& t,
                             const data::RecallTask& task,
                             int64_t n,
                             uint64_t seed);

// Recall with every layer's forgetting gate alpha forced to `alpha` (0 < alpha < 1) at test time;
// the learned gates are restored afterwards.
double recall_with_forgetting(
    TrainedTitans& t, const data::RecallTask& task, int64_t n, uint64_t seed, double alpha);

}  // namespace attn::experiments
