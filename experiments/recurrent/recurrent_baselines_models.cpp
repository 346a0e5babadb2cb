#include "experiments/recurrent/recurrent_baselines_models.h"

#include "experiments/kit/kit.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "data/stream.h"
#include "data/tasks/sequence.h"
#include "nn/positional/position_kind.h"
#include "train/checkpoint.h"
#include "train/fit.h"
#include "train/metrics.h"
#include "train/run/task_model.h"
#include "train/run/task_setup.h"

namespace attn::experiments::baselines {

namespace fs = std::filesystem;

namespace {

// The model of a finished sub-run: built as train_task builds it, weights from its checkpoint.
std::unique_ptr<train::TaskModel> trained_model(const train::TrainConfig& tc) {
  const train::TaskSetup setup = train::make_task_setup(tc);
  const train::SequenceLimits limits{
      std::max(setup.train->max_src_len(), setup.heldout->max_src_len()),
      std::max(setup.train->max_tgt_len(), setup.heldout->max_tgt_len())};
  Generator gen(train::init_seed(tc));
  auto model = train::make_task_model(tc, *setup.train, limits, gen);
  train::TrainingState state{.model = &model->module()};
  train::load_checkpoint((fs::path(tc.out) / "checkpoint.safetensors").string(), state);
  return model;
}

// Greedy decoding on `per_length` fresh examples of each length: exact match, token accuracy.
void score_lengths(train::TaskModel& model,
                   const std::vector<int64_t>& lengths,
                   int64_t per_length,
                   uint64_t seed,
                   Outcome& o) {
  model.module().eval();
  NoGrad off;
  for (const int64_t len : lengths) {
    const data::SequenceTask task(
        {.op = data::SequenceOp::kReverse, .min_len = len, .max_len = len});
    const auto set = data::make_heldout(task, per_length, seed * 1000 + 500 + len);
    train::SeqMetrics m;
    for (const auto& batch : kit::chunks(set, 250)) {
      std::vector<std::vector<int64_t>> expected;
      for (const auto& ex : batch) expected.push_back(ex.tgt);
      m.add_sequences(model.generate(batch, len + 1), expected);
    }
    o.exact.push_back(m.exact_match());
    o.token.push_back(m.token_accuracy());
  }
}

// (step, elapsed seconds) of the training rows of a sub-run's metrics.jsonl (none when the run
// stopped before its first training log row).
std::vector<std::pair<double, double>> step_times(const fs::path& jsonl) {
  std::ifstream in(jsonl);
  if (!in) throw Error("recurrent-baselines: cannot read " + jsonl.string());
  std::vector<std::pair<double, double>> out;
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json row = nlohmann::json::parse(line);
    if (row.at("split") == "train" && row.contains("elapsed_s"))
      out.emplace_back(row.at("step").get<double>(), row.at("elapsed_s").get<double>());
  }
  return out;
}

// The per-step losses on a wall-clock axis: the metrics log gives the elapsed time every few
// steps; steps in between are placed by linear interpolation (past the last row, at the mean
// step time). Averaged over bins so each curve has at most ~120 points.
void loss_curve(const fs::path& jsonl, Outcome& o) {
  const std::vector<double>& losses = o.summary.result.losses;
  const auto n = static_cast<int64_t>(losses.size());
  if (n == 0) return;
  std::vector<std::pair<double, double>> anchors{{0.0, 0.0}};
  for (const auto& a : step_times(jsonl)) anchors.push_back(a);
  const double rate = anchors.size() > 1 ? anchors.back().second / anchors.back().first
                                         : o.summary.result.train_seconds / static_cast<double>(n);
  auto time_at = [&](double s) {
    for (size_t i = 1; i < anchors.size(); ++i)
      if (s <= anchors[i].first) {
        const auto [s0, t0] = anchors[i - 1];
        const auto [s1, t1] = anchors[i];
        return t0 + (t1 - t0) * (s - s0) / (s1 - s0);
      }
    return anchors.back().second + (s - anchors.back().first) * rate;
  };
  const int64_t bin = std::max<int64_t>(1, n / 120);
  for (int64_t start = 0; start < n; start += bin) {
    const int64_t end = std::min(n, start + bin);
    const double mean = std::accumulate(losses.begin() + start, losses.begin() + end, 0.0) /
                        static_cast<double>(end - start);
    o.curve_s.push_back(time_at(static_cast<double>(end)));
    o.curve_step.push_back(static_cast<double>(end));
    o.curve_loss.push_back(mean);
  }
  o.final_loss = kit::mean_of_last(losses, 50);
}

// Mean of values[i] over the lengths that satisfy `keep` (NaN when none does).
template <class Keep>
double mean_where(const std::vector<double>& values,
                  const std::vector<int64_t>& lengths,
                  Keep keep) {
  double sum = 0;
  int n = 0;
  for (size_t i = 0; i < lengths.size(); ++i)
    if (keep(lengths[i])) sum += values[i], ++n;
  return n ? sum / n : std::nan("");
}

}  // namespace

std::vector<ModelSpec> parse_models(const std::string& text) {
  static const std::vector<std::string> cells{"rnn", "gru", "lstm"};
  static const std::vector<std::string> kinds{"none", "bahdanau", "luong_dot", "luong_general"};
  auto has = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  std::vector<ModelSpec> specs;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
    if (item.empty()) continue;
    ModelSpec s;
    const size_t colon = item.find(':');
    s.model = item.substr(0, colon);
    const std::string after = colon == std::string::npos ? "" : item.substr(colon + 1);
    if (s.model == "transformer")
      s.positional = after;
    else
      s.attention = colon == std::string::npos ? "none" : after;
    const bool ok = s.model == "transformer"
                        ? colon == std::string::npos || has(nn::position_kind_names(), after)
                        : has(cells, s.model) && has(kinds, s.attention);
    if (!ok)
      throw UsageError(fmt::format(
          "--models: cannot read '{}': expected CELL:ATTENTION with CELL one of rnn, gru, lstm "
          "and ATTENTION one of none, bahdanau, luong_dot, luong_general, or 'transformer' "
          "(optionally transformer:POSITIONAL with POSITIONAL one of {})",
          item, fmt::join(nn::position_kind_names(), ", ")));
    for (const auto& other : specs)
      if (other.key() == s.key())
        throw UsageError(fmt::format("--models lists '{}' twice", s.label()));
    specs.push_back(s);
  }
  if (specs.empty()) throw UsageError("--models is empty");
  return specs;
}

train::TrainConfig train_config(const ModelSpec& spec,
                                const Config& cfg,
                                const std::vector<int64_t>& lengths,
                                uint64_t seed,
                                const fs::path& out) {
  train::TrainConfig tc;
  tc.task = "reversal";
  tc.model = spec.model;
  if (!spec.attention.empty()) tc.attention = spec.attention;
  if (!spec.positional.empty()) tc.positional = spec.positional;
  tc.seed = seed;
  tc.hidden = cfg.get_int("hidden");
  tc.d_model = cfg.get_int("d_model");
  tc.num_layers = cfg.get_int("layers");
  tc.min_len = 1;
  tc.max_len = cfg.get_int("train_max_len");
  // The held-out range also sizes the transformer's positional table, so the longest
  // evaluated length must be in it.
  tc.eval_min_len = *std::min_element(lengths.begin(), lengths.end());
  tc.eval_max_len = *std::max_element(lengths.begin(), lengths.end());
  tc.eval_size = 100;  // train_task's own final check; the scores below use their own sets
  tc.eval_every = 0;   // no evaluation inside the budget
  tc.target = 0;       // no early stop: every model uses its whole budget
  tc.steps = 1'000'000'000;
  tc.max_seconds = cfg.get_real("seconds");
  tc.batch_size = cfg.get_int("batch");
  tc.lr = cfg.get_real("lr");
  tc.schedule = "warmup";  // flat after the warm-up: a cosine would need the step count
  tc.warmup = cfg.get_int("warmup");
  tc.checkpoint_every = 0;  // one checkpoint, at the end
  tc.out = out.string();
  return tc;
}

Outcome train_and_score(const ModelSpec& spec,
                        const Config& cfg,
                        const std::vector<int64_t>& lengths,
                        uint64_t seed,
                        const fs::path& root) {
  Outcome o;
  o.spec = spec;
  const train::TrainConfig tc = train_config(spec, cfg, lengths, seed, root / spec.key());
  try {  // a divergence or anomaly detection's error names the model trained
    o.summary = train::train_task(tc, stdout);
  } catch (const Error&) {
    train::rethrow_naming_variant(spec.key());
  }
  o.positional = train::resolved_positional(tc);
  loss_curve(fs::path(tc.out) / "metrics.jsonl", o);
  const auto model = trained_model(tc);
  o.params = kit::count_parameters(model->module());
  score_lengths(*model, lengths, cfg.get_int("per_length"), seed, o);
  const int64_t tmax = tc.max_len;
  auto in = [&](int64_t l) { return l <= tmax; };
  auto beyond = [&](int64_t l) { return l > tmax; };
  o.exact_in = mean_where(o.exact, lengths, in);
  o.exact_beyond = mean_where(o.exact, lengths, beyond);
  o.token_in = mean_where(o.token, lengths, in);
  o.token_beyond = mean_where(o.token, lengths, beyond);
  o.exact_long = mean_where(o.exact, lengths, [&](int64_t l) { return 2 * l > tmax && l <= tmax; });
  return o;
}

}  // namespace attn::experiments::baselines
