#include "experiments/common/scaling_run.h"

#include "data/corpus.h"
#include "data/stream.h"
#include "experiments/kit/kit.h"
#include "train/run/task_model.h"
#include "train/run/task_setup.h"

namespace attn::experiments {

double ScalingCurve::loss(size_t checkpoint) const {
  const auto& g = group_loss.at(checkpoint);
  double s = 0;
  for (double v : g) s += v;
  return s / static_cast<double>(g.size());
}

int64_t non_embedding_parameters(const std::vector<std::pair<std::string, int64_t>>& sizes) {
  int64_t n = 0;
  for (const auto& [name, count] : sizes) {
    const bool embedding = name.rfind("tok_emb.", 0) == 0 || name.rfind("pos_emb.", 0) == 0 ||
                           name.rfind("lm_head.", 0) == 0;
    if (!embedding) n += count;
  }
  return n;
}

namespace {

// Mean held-out loss of each group of consecutive windows: the model in eval mode, no tape.
// Every window has block_len targets, so the mean of the group means is the mean per character.
std::vector<double> group_losses(train::TaskModel& model,
                                 const std::vector<data::Example>& windows,
                                 int64_t groups) {
  const size_t per = windows.size() / static_cast<size_t>(groups);
  model.module().eval();
  NoGrad off;
  std::vector<double> out;
  for (int64_t g = 0; g < groups; ++g) {
    const auto first = windows.begin() + static_cast<int64_t>(per) * g;
    out.push_back(model.loss({first, first + static_cast<int64_t>(per)}).loss.item());
  }
  model.module().train();
  return out;
}

}  // namespace

ScalingCurve train_scaling_run(const train::TrainConfig& tc,
                               const std::vector<int64_t>& eval_steps,
                               int64_t groups) {
  train::validate_train_config(tc);
  if (tc.task != "charlm") throw Error("train_scaling_run: the task must be charlm");
  if (eval_steps.empty() || !std::is_sorted(eval_steps.begin(), eval_steps.end()) ||
      eval_steps.front() < 1 || eval_steps.back() > tc.steps)
    throw Error(
        fmt::format("train_scaling_run: evaluation steps must increase within [1, {}]", tc.steps));
  const auto start = std::chrono::steady_clock::now();
  const train::TaskSetup setup = train::make_task_setup(tc);
  if (groups < 1 || static_cast<int64_t>(setup.heldout_set.size()) < groups)
    throw Error(fmt::format("train_scaling_run: {} held-out windows cannot make {} groups",
                            setup.heldout_set.size(), groups));
  Generator init(train::init_seed(tc));
  const train::SequenceLimits limits{
      std::max(setup.train->max_src_len(), setup.heldout->max_src_len()),
      std::max(setup.train->max_tgt_len(), setup.heldout->max_tgt_len())};
  const auto model = train::make_task_model(tc, *setup.train, limits, init);
  data::ExampleStream stream(setup.train, train::stream_seed(tc));

  ScalingCurve c;
  c.d_model = tc.d_model;
  c.layers = tc.num_layers;
  c.seed = tc.seed;
  std::vector<std::pair<std::string, int64_t>> sizes;
  for (const auto& [name, p] : model->module().named_parameters()) {
    sizes.emplace_back(name, p.numel());
    c.params += p.numel();
  }
  c.non_embedding_params = non_embedding_parameters(sizes);
  if (const auto* lm = dynamic_cast<const data::LanguageModelTask*>(setup.train.get()))
    c.train_chars = static_cast<int64_t>(lm->all_windows().size()) * tc.block_len;

  train::FitSettings fs;
  fs.name =
      fmt::format("scaling run d_model {} layers {} seed {}", tc.d_model, tc.num_layers, tc.seed);
  fs.steps = tc.steps;
  fs.batch_size = tc.batch_size;
  fs.optimizer = {.kind = "adamw",
                  .lr = tc.lr,
                  .weight_decay = tc.weight_decay,
                  .schedule = tc.schedule,
                  .warmup = tc.warmup,
                  .d_model = tc.d_model,
                  .clip = tc.clip};
  fs.eval_every = 1;  // the callback measures at the requested steps only
  train::Fit fit(model->module(), fs, [&](const train::BatchPart& part) {
    const train::LossOut l = model->loss(part.items(stream.next(tc.batch_size)));
    return train::StepLoss{l.loss, l.tokens};
  });
  size_t next_eval = 0;
  fit.run([&](int64_t s) {
    while (next_eval < eval_steps.size() && eval_steps[next_eval] == s) {
      c.steps.push_back(s);
      c.tokens.push_back(fit.items_seen());
      c.group_loss.push_back(group_losses(*model, setup.heldout_set, groups));
      ++next_eval;
    }
    return train::Metrics{};
  });
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return c;
}

}  // namespace attn::experiments
