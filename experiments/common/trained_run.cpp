#include "experiments/common/trained_run.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "experiments/kit/kit.h"
#include "experiments/kit/scratch_folder.h"
#include "experiments/kit/side_by_side.h"
#include "nn/positional/position_kind.h"
#include "train/fit.h"
#include "train/run/run_folder.h"

namespace attn::experiments {

namespace fs = std::filesystem;

namespace {

// train_task's summary; a divergence or anomaly detection's error names the variant trained.
train::TrainSummary train_naming(const train::TrainConfig& tc,
                                 const std::string& variant,
                                 std::FILE* out) {
  try {
    return train::train_task(tc, out);
  } catch (const Error&) {
    train::rethrow_naming_variant(variant);
  }
}

// What a run prints, held in memory (open_memstream) until the caller prints it.
class Captured {
 public:
  Captured() : file_(open_memstream(&text_, &size_)) {}
  ~Captured() {
    if (file_) std::fclose(file_);
    std::free(text_);
  }
  Captured(const Captured&) = delete;
  Captured& operator=(const Captured&) = delete;
  std::FILE* file() const { return file_; }
  std::string text() {
    if (file_) std::fflush(file_);
    return text_ ? std::string(text_, size_) : std::string();
  }

 private:
  char* text_ = nullptr;
  size_t size_ = 0;
  std::FILE* file_;
};

TrainedRun train_into(train::TrainConfig tc,
                      const RunContext& ctx,
                      const std::string& subfolder,
                      std::FILE* out) {
  train::validate_train_config(tc);
  tc.out = (ctx.dir() / subfolder).string();
  TrainedRun r;
  r.summary = train_naming(tc, subfolder, out);
  r.setup = train::make_task_setup(tc);
  return r;
}

}  // namespace

TrainedRun train_in_scratch(train::TrainConfig tc, const std::string& name) {
  train::validate_train_config(tc);
  TrainedRun r;
  auto scratch = std::make_shared<kit::ScratchFolder>(name);  // removed if training throws
  tc.out = scratch->path().string();
  r.scratch = scratch;
  r.summary = train_naming(tc, name, nullptr);  // no "run folder /tmp/..." line: it vanishes
  r.setup = train::make_task_setup(tc);
  return r;
}

TrainedRun train_for_experiment(train::TrainConfig tc,
                                const RunContext& ctx,
                                const std::string& subfolder) {
  if (ctx.dir().empty()) return train_in_scratch(std::move(tc), subfolder);
  return train_into(std::move(tc), ctx, subfolder, stdout);
}

std::vector<TrainedRun> train_side_by_side(const std::vector<train::TrainConfig>& tcs,
                                           const RunContext& ctx,
                                           const std::vector<std::string>& subfolders) {
  for (const train::TrainConfig& tc : tcs) train::validate_train_config(tc);  // before any work
  // The runs are independent: train_task seeds each one's generators from its own config.
  auto done = kit::side_by_side(tcs.size(), [&](size_t i) -> std::pair<TrainedRun, std::string> {
    if (!kit::in_side_by_side_job()) return {train_for_experiment(tcs[i], ctx, subfolders[i]), ""};
    train::TrainConfig tc = tcs[i];
    tc.progress = "off";  // two displays would share one stdout
    if (ctx.dir().empty()) return {train_in_scratch(tc, subfolders[i]), ""};
    Captured out;
    TrainedRun r = train_into(tc, ctx, subfolders[i], out.file());
    return {std::move(r), out.text()};
  });
  std::vector<TrainedRun> runs;
  for (auto& [run, text] : done) {
    std::fputs(text.c_str(), stdout);
    runs.push_back(std::move(run));
  }
  return runs;
}

Config& add_reversal_fields(Config& config, const ReversalDefaults& d) {
  return config.add_int("d_model", d.d_model, "model width", {.min = 1})
      .add_int("nhead", d.nhead, "attention heads per layer (must divide d_model)", {.min = 1})
      .add_int("layers", d.layers, "encoder layers and decoder layers", {.min = 1})
      .add_int("dim_ff", d.dim_ff, "feed-forward width", {.min = 1})
      .add_bool("src_eos", true, "end each source with an EOS token (the marker a head can find)")
      .add_string("positional", "sinusoidal",
                  "positions (nn/positional): none learned sinusoidal rope alibi t5_bias",
                  nn::position_kind_names())
      .add_int("steps", d.steps, "most training steps (stops early at --target)", {.min = 1})
      .add_int("batch", d.batch, "sequences per step", {.min = 1})
      .add_real("lr", d.lr, "peak AdamW learning rate (cosine schedule)", {.min = 0})
      .add_int("warmup", d.warmup, "warm-up steps", {.min = 0})
      .add_int("eval_every", d.eval_every, "steps between held-out evaluations", {.min = 1})
      .add_int("eval_size", d.eval_size, "held-out sequences (lengths 8-16)", {.min = 1})
      .add_real("target", d.target, "stop once held-out exact match reaches this", {.min = 0});
}

double exact_match(train::TaskModel& model, const std::vector<data::Example>& set) {
  if (set.empty()) throw Error("exact_match: the held-out set is empty");
  model.module().eval();
  NoGrad off;
  int64_t right = 0;
  for (size_t lo = 0; lo < set.size(); lo += 100) {
    const std::vector<data::Example> batch(
        set.begin() + static_cast<std::ptrdiff_t>(lo),
        set.begin() + static_cast<std::ptrdiff_t>(std::min(set.size(), lo + 100)));
    size_t longest = 0;
    for (const auto& ex : batch) longest = std::max(longest, ex.tgt.size());
    const auto answers = model.generate(batch, static_cast<int64_t>(longest) + 1);
    for (size_t i = 0; i < batch.size(); ++i) right += answers[i] == batch[i].tgt;
  }
  return static_cast<double>(right) / static_cast<double>(set.size());
}

train::TrainConfig transformer_config(const Config& cfg, uint64_t seed) {
  train::TrainConfig t;
  t.seed = seed;
  t.d_model = cfg.get_int("d_model");
  t.nhead = cfg.get_int("nhead");
  t.num_layers = cfg.get_int("layers");
  t.dim_ff = cfg.get_int("dim_ff");
  t.checkpoint_every = 0;  // only the final checkpoint
  return t;
}

train::TrainConfig reversal_train_config(const Config& cfg, uint64_t seed) {
  train::TrainConfig t = transformer_config(cfg, seed);
  t.task = "reversal";
  t.model = "transformer";
  t.src_eos = cfg.get_bool("src_eos");
  t.positional = cfg.get_string("positional");
  t.steps = cfg.get_int("steps");
  t.batch_size = cfg.get_int("batch");
  t.lr = cfg.get_real("lr");
  t.warmup = cfg.get_int("warmup");
  t.eval_every = cfg.get_int("eval_every");
  t.eval_size = cfg.get_int("eval_size");
  t.target = cfg.get_real("target");
  return t;
}

}  // namespace attn::experiments
