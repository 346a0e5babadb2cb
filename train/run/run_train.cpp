#include "train/run/run_train.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "autograd/build_info.h"
#include "autograd/error.h"
#include "autograd/kernels/parallel.h"
#include "autograd/mode.h"
#include "autograd/safetensors.h"
#include "autograd/tape.h"
#include "data/mlm.h"
#include "data/stream.h"
#include "train/checkpoint.h"
#include "train/distributed/communicator.h"
#include "train/distributed/data_parallel.h"
#include "train/metrics.h"
#include "train/optim/adam.h"
#include "train/optim/clip.h"
#include "train/run/run_folder.h"
#include "train/run/task_model.h"
#include "train/run/task_setup.h"
#include "train/schedule.h"

namespace attn::train {

namespace {

namespace fs = std::filesystem;
constexpr int64_t kEvalBatch = 250;

// A new folder runs/train-<task>-<model>-<date>-<time>[-k]: two runs started in the same
// second get different folders.
std::string default_run_dir(const TrainConfig& cfg) {
  const std::time_t now = std::time(nullptr);
  return create_unique_folder(fmt::format("runs/train-{}-{}-{:%Y%m%d-%H%M%S}", cfg.task, cfg.model,
                                          fmt::localtime(now)))
      .string();
}

nlohmann::json config_json(const TrainConfig& cfg) {
  nlohmann::json j;
  for (const auto& name : train_option_names()) j[name] = get_train_option(cfg, name);
  return j;
}

// Options that change what a run computes; a resumed run must agree on all of them. The step
// budget may grow on resume, except under the cosine schedule, whose curve depends on it.
bool affects_computation(const std::string& name, const TrainConfig& cfg) {
  static const std::vector<std::string> free{"steps",    "eval_every", "target", "max_seconds",
                                             "out",      "save",       "resume", "checkpoint_every",
                                             "progress", "eval_size"};
  if (name == "steps") return cfg.schedule == "cosine";
  return std::find(free.begin(), free.end(), name) == free.end();
}

// The options a resumed run must share with the checkpoint's run. attnlab train stores them
// all (as text) in the checkpoint's metadata "extra.config"; a file without them cannot be
// checked, so it is refused rather than continued on trust.
void check_resume_config(const TrainConfig& cfg,
                         const CheckpointInfo& info,
                         const std::string& path) {
  auto it = info.extra.find("config");
  if (it == info.extra.end())
    throw Error(fmt::format(
        "train: cannot resume from '{}': the checkpoint stores no training configuration "
        "(metadata 'extra.config'), so this run's options cannot be checked against it; only "
        "checkpoints written by `attnlab train` can be resumed",
        path));
  nlohmann::json saved;
  try {
    saved = nlohmann::json::parse(it->second);
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format(
        "train: cannot resume from '{}': its stored configuration (metadata 'extra.config') is "
        "not valid JSON: {}",
        path, e.what()));
  }
  if (!saved.is_object())
    throw Error(fmt::format(
        "train: cannot resume from '{}': its stored configuration (metadata 'extra.config') is "
        "not a JSON object",
        path));
  // Checkpoints from before --positional existed used the model's own scheme.
  if (!saved.contains("positional")) {
    TrainConfig old = cfg;
    old.positional = "auto";
    saved["positional"] = resolved_positional(old);
  }
  // Checkpoints from before --score existed used the dot product.
  if (!saved.contains("score")) saved["score"] = "dot";
  // Checkpoints from before --n_kv_heads existed had one key/value head per query head.
  if (!saved.contains("n_kv_heads")) saved["n_kv_heads"] = "0";
  // Checkpoints from before the block ablation switches had the whole block.
  for (const char* part : {"layer_norm", "residual", "feedforward"})
    if (!saved.contains(part)) saved[part] = "true";
  // Checkpoints from before --ffn_block existed had the built-in block.
  if (!saved.contains("ffn_block")) saved["ffn_block"] = "";
  std::vector<std::string> diffs;
  for (const auto& name : train_option_names()) {
    if (!affects_computation(name, cfg)) continue;
    if (!saved.contains(name) || !saved[name].is_string())
      throw Error(fmt::format(
          "train: cannot resume from '{}': its stored configuration has {} for the field '{}' "
          "(expected its value as text, e.g. \"{}\")",
          path, saved.contains(name) ? "the value " + saved[name].dump() : "no value", name,
          get_train_option(cfg, name)));
    const std::string was = saved[name].get<std::string>();
    if (was != get_train_option(cfg, name))
      diffs.push_back(fmt::format("--{} is {} in the checkpoint but {} now", name, was,
                                  get_train_option(cfg, name)));
  }
  if (!diffs.empty())
    throw UsageError(
        fmt::format("train: cannot resume from '{}':\n  {}", path, fmt::join(diffs, "\n  ")));
}

// The "extra." metadata of a checkpoint (its stored configuration) read without a model;
// nullopt when the file cannot be read, which load_checkpoint then reports in full.
std::optional<CheckpointInfo> peek_checkpoint(const std::string& path) {
  try {
    CheckpointInfo info;
    for (const auto& [k, v] : read_checkpoint_file(path).metadata)
      if (k.rfind("extra.", 0) == 0) info.extra[k.substr(6)] = v;
    return info;
  } catch (const Error&) {
    return std::nullopt;
  }
}

// The positional scheme of a run: --positional as given, or for auto the model's own, except
// that a resumed run with auto continues with the scheme its checkpoint stored.
std::string run_positional(const TrainConfig& cfg, const std::optional<CheckpointInfo>& saved) {
  if (cfg.positional != "auto" || !saved) return resolved_positional(cfg);
  auto it = saved->extra.find("config");
  if (it == saved->extra.end()) return resolved_positional(cfg);
  const nlohmann::json j = nlohmann::json::parse(it->second, nullptr, /*exceptions=*/false);
  if (!j.is_object() || !j.contains("positional") || !j["positional"].is_string())
    return resolved_positional(cfg);
  const std::string stored = j["positional"].get<std::string>();
  return stored == "auto" ? resolved_positional(cfg) : stored;
}

struct Evaluation {
  Metrics metrics;
  std::map<int64_t, double> exact_by_length;
  std::vector<std::vector<int64_t>> answers;  // seq2seq: first few predictions
};

template <class F>
void in_batches(const std::vector<data::Example>& set, F&& f) {
  for (size_t i = 0; i < set.size(); i += kEvalBatch)
    f(std::vector<data::Example>(
        set.begin() + static_cast<int64_t>(i),
        set.begin() + static_cast<int64_t>(std::min(set.size(), i + kEvalBatch))));
}

// Every rank's evaluation counts summed in rank order into every rank's: the SeqMetrics
// counters, the classification counts and (exact, count) per held-out length. The lengths come
// from the whole held-out set, which every rank holds, so the vectors line up.
void sum_over_ranks(distributed::Communicator& comm,
                    const TaskSetup& setup,
                    SeqMetrics& seq,
                    int64_t& right,
                    int64_t& total,
                    std::map<int64_t, std::pair<int64_t, int64_t>>& by_len) {
  std::vector<double> v = seq.counts();
  v.push_back(static_cast<double>(right));
  v.push_back(static_cast<double>(total));
  std::map<int64_t, std::pair<int64_t, int64_t>> lengths;
  if (setup.heldout->kind() == data::TaskKind::kSeq2Seq)
    for (const auto& ex : setup.heldout_set) lengths[static_cast<int64_t>(ex.src.size())];
  for (const auto& [len, unused] : lengths) {
    v.push_back(static_cast<double>(by_len[len].first));
    v.push_back(static_cast<double>(by_len[len].second));
  }
  comm.sum_in_rank_order(v, "the evaluation");
  seq = SeqMetrics();
  seq.add_counts(std::vector<double>(v.begin(), v.begin() + 6));
  right = static_cast<int64_t>(v[6]);
  total = static_cast<int64_t>(v[7]);
  size_t i = 8;
  for (auto& [len, ec] : lengths) {
    ec = {static_cast<int64_t>(v[i]), static_cast<int64_t>(v[i + 1])};
    i += 2;
  }
  by_len = lengths;
}

// What must be equal on every rank of a data-parallel run: every option as given and the
// computation path. Not the files rank 0 alone writes (--out, --save) or its progress display,
// and not the thread count (the summed gradient is the same on every rank).
std::map<std::string, std::string> rank_options(const TrainConfig& cfg) {
  std::map<std::string, std::string> o;
  for (const auto& name : train_option_names())
    if (name != "out" && name != "save" && name != "progress")
      o["--" + name] = get_train_option(cfg, name);
  o["path (--reference/--fast)"] = path_name();
  return o;
}

// The held-out set is split across the ranks like a batch (rank r scores its slice) and the
// counts are summed in rank order, so every rank gets the same metrics (the early-stopping
// decision is the same everywhere). Rank 0's slice starts the set: its answers are the samples.
Evaluation evaluate(TaskModel& model, const TaskSetup& setup, distributed::Communicator& comm) {
  nn::Module& m = model.module();
  m.eval();
  NoGrad off;
  Evaluation ev;
  SeqMetrics seq;
  int64_t right = 0, total = 0;
  std::map<int64_t, std::pair<int64_t, int64_t>> by_len;  // length -> (exact, count)
  const data::TaskKind kind = setup.heldout->kind();
  const distributed::Slice mine = distributed::rank_slice(
      static_cast<int64_t>(setup.heldout_set.size()), comm.rank(), comm.size());
  const std::vector<data::Example> slice(setup.heldout_set.begin() + mine.begin,
                                         setup.heldout_set.begin() + mine.end);
  in_batches(slice, [&](const std::vector<data::Example>& batch) {
    const LossOut l = model.loss(batch);
    seq.add_nll(l.loss.item() * static_cast<double>(l.tokens), l.tokens);
    if (kind == data::TaskKind::kSeq2Seq) {
      const auto answers = model.generate(batch, setup.heldout->max_tgt_len() + 1);
      std::vector<std::vector<int64_t>> expected;
      for (size_t i = 0; i < batch.size(); ++i) {
        expected.push_back(batch[i].tgt);
        auto& [exact, count] = by_len[static_cast<int64_t>(batch[i].src.size())];
        exact += answers[i] == batch[i].tgt;
        ++count;
        if (ev.answers.size() < 8) ev.answers.push_back(answers[i]);
      }
      seq.add_sequences(answers, expected);
    } else if (kind == data::TaskKind::kClassification) {
      const auto labels = model.classify(batch);
      for (size_t i = 0; i < batch.size(); ++i) right += labels[i] == batch[i].label;
      total += static_cast<int64_t>(batch.size());
    }
  });
  m.train();
  if (comm.size() > 1) sum_over_ranks(comm, setup, seq, right, total, by_len);
  ev.metrics["loss"] = seq.mean_nll();
  if (kind == data::TaskKind::kSeq2Seq) {
    ev.metrics["exact_match"] = seq.exact_match();
    ev.metrics["token_accuracy"] = seq.token_accuracy();
    for (const auto& [len, ec] : by_len)
      ev.exact_by_length[len] = static_cast<double>(ec.first) / static_cast<double>(ec.second);
  } else if (kind == data::TaskKind::kClassification) {
    ev.metrics["accuracy"] = static_cast<double>(right) / static_cast<double>(total);
  } else {
    ev.metrics["perplexity"] = seq.perplexity();
  }
  return ev;
}

std::unique_ptr<LrSchedule> schedule_for(const TrainConfig& cfg) {
  ScheduleConfig s{.kind = cfg.schedule, .lr = cfg.lr, .warmup = cfg.warmup, .total = cfg.steps};
  if (cfg.schedule == "noam") {
    // --lr is the peak; the 2017 formula peaks at factor / sqrt(d_model * warmup).
    s.d_model = cfg.d_model;
    s.factor = cfg.lr * std::sqrt(static_cast<double>(cfg.d_model * cfg.warmup));
  }
  return make_schedule(s);
}

std::string samples_text(const TaskSetup& setup, const Evaluation& ev) {
  const auto& tok = setup.heldout->tokenizer();
  std::string out;
  for (size_t i = 0; i < ev.answers.size(); ++i) {
    const auto& ex = setup.heldout_set[i];
    out +=
        fmt::format("{}  ->  {}   (expected {}){}\n", tok.decode(ex.src), tok.decode(ev.answers[i]),
                    tok.decode(ex.tgt), ev.answers[i] == ex.tgt ? "" : "   WRONG");
  }
  return out;
}

// --save must be writable where it points before the run claims its folder: a checkpoint that
// cannot be written is found now, not after the first interval of training (and an impossible
// path leaves no run folder behind). Its folder is the run folder (created by the claim) or one
// that already exists.
void check_save_path(const TrainConfig& cfg) {
  std::error_code ec;
  const fs::path save(cfg.save);
  if (fs::is_directory(save, ec))
    throw UsageError(
        fmt::format("train: --save '{}' is a folder; give a file name such as "
                    "'{}'",
                    cfg.save, (save / "checkpoint.safetensors").string()));
  const fs::path parent = save.has_parent_path() ? save.parent_path() : fs::path(".");
  if (fs::weakly_canonical(parent, ec) == fs::weakly_canonical(fs::path(cfg.out), ec)) return;
  if (!fs::is_directory(parent, ec))
    throw UsageError(fmt::format(
        "train: --save '{}': the folder '{}' {}; create it first or "
        "choose another path",
        cfg.save, parent.string(), fs::exists(parent, ec) ? "is not a folder" : "does not exist"));
}

}  // namespace

TrainSummary train_task(const TrainConfig& cfg_in, std::FILE* out) {
  // Data-parallel when started as several ranks (train/distributed/): every rank runs this
  // function; rank 0 alone ("the lead") owns the run folder and writes every file.
  distributed::Communicator& comm = distributed::world();
  const bool lead = comm.rank() == 0;
  distributed::require_same_options(comm, rank_options(cfg_in));
  TrainConfig cfg = cfg_in;
  std::optional<CheckpointInfo> saved;
  // Every check before any work, on every rank; an error on one rank is reported on all.
  distributed::all_or_none(comm, "the start-up checks", [&] {
    validate_train_config(cfg);
    if (cfg.batch_size < comm.size())
      throw UsageError(fmt::format(
          "train: --batch-size {} is smaller than the {} ranks; every rank needs at least one "
          "example of the global batch",
          cfg.batch_size, comm.size()));
    if (std::error_code ec; !cfg.resume.empty() && !fs::is_regular_file(cfg.resume, ec))
      throw UsageError(
          fmt::format("train: --resume '{}': {}; give the checkpoint file of the run "
                      "to continue (<run folder>/checkpoint.safetensors)",
                      cfg.resume, fs::exists(cfg.resume, ec) ? "not a file" : "no such file"));
    if (cfg.out.empty() && lead)
      cfg.out =
          cfg.resume.empty() ? default_run_dir(cfg) : fs::path(cfg.resume).parent_path().string();
    if (cfg.out.empty()) cfg.out = ".";
    if (cfg.save.empty()) cfg.save = (fs::path(cfg.out) / "checkpoint.safetensors").string();
    // A resumed run is checked against the checkpoint's stored options before a model is built
    // (a different --positional would otherwise surface as mismatched tensors).
    saved = cfg.resume.empty() ? std::nullopt : peek_checkpoint(cfg.resume);
    cfg.positional = run_positional(cfg, saved);  // stored resolved: config.json says what ran
    validate_train_config(cfg);                   // a stored scheme must fit this run's sizes too
    if (saved) check_resume_config(cfg, *saved, cfg.resume);
    if (lead) check_save_path(cfg);
  });

  std::optional<RunFolderLock> folder_lock;
  std::optional<TaskSetup> setup_holder;
  std::shared_ptr<TaskModel> model;
  std::unique_ptr<data::ExampleStream> stream_holder;
  std::unique_ptr<AdamW> opt_holder;
  TrainingState state;
  TrainSummary summary;
  distributed::all_or_none(comm, "setting up the run", [&] {
    // Before any work: the folder is ours alone until the run ends, and a fresh run never
    // replaces an earlier run's files.
    if (lead) folder_lock = claim_run_folder(cfg.out, "--out", !cfg.resume.empty());
    setup_holder = make_task_setup(cfg);
    Generator init(init_seed(cfg));
    const SequenceLimits limits{
        std::max(setup_holder->train->max_src_len(), setup_holder->heldout->max_src_len()),
        std::max(setup_holder->train->max_tgt_len(), setup_holder->heldout->max_tgt_len())};
    model = make_task_model(cfg, *setup_holder->train, limits, init);
    stream_holder = std::make_unique<data::ExampleStream>(setup_holder->train, stream_seed(cfg));
    opt_holder = std::make_unique<AdamW>(
        model->module().parameters(), AdamOptions{.lr = cfg.lr, .weight_decay = cfg.weight_decay});
    state = {.model = &model->module(),
             .optimizer = opt_holder.get(),
             .generators = model->generators(),
             .stream = stream_holder.get()};
    if (!cfg.resume.empty()) {
      const CheckpointInfo info = load_checkpoint(cfg.resume, state);  // validated before changing
      check_resume_config(cfg, info, cfg.resume);
      // A different thread or rank count changes the order of float additions.
      auto note = [&](const std::string& what, const std::string& before, int now) {
        if (lead && out && before != std::to_string(now))
          fmt::print(out,
                     "note: the checkpoint was written with {} {} and this run uses {}; the "
                     "continuation is correct but not bit-identical to an uninterrupted run\n",
                     before, what, now);
      };
      if (auto t = info.extra.find("threads"); t != info.extra.end())
        note("threads", t->second, num_threads());
      auto r = info.extra.find("ranks");  // absent: written before data parallelism, 1 rank
      note("ranks", r == info.extra.end() ? "1" : r->second, comm.size());
      summary.start_step = info.step;
      if (info.step >= cfg.steps)
        throw UsageError(fmt::format(
            "train: the checkpoint is at step {}; raise --steps above it to continue", info.step));
    }
    // Dropout and masking draw different numbers on each rank (after a resume too).
    distributed::separate_generators(state.generators, comm.rank());
  });
  const TaskSetup& setup = *setup_holder;
  data::ExampleStream& stream = *stream_holder;
  AdamW& opt = *opt_holder;
  const auto schedule = schedule_for(cfg);

  summary.main_metric = setup.main_metric;
  summary.model_description = model->describe();
  summary.model = model;
  summary.run_dir = cfg.out;
  if (lead) {
    nlohmann::json cj = config_json(cfg);
    cj["threads"] = num_threads();
    cj["ranks"] = comm.size();
    cj["communicator"] = comm.describe();
    cj["path"] = path_name();  // reference or fast (autograd/mode.h)
    cj["detect_anomaly"] = detect_anomaly();
    cj["build"] = build_summary();  // version, kernel target and BLAS core: timings depend on them
    write_file_atomically((fs::path(cfg.out) / "config.json").string(), cj.dump(2) + "\n");
    if (out) {
      fmt::print(
          out, "train {} with {}: {}\n  run folder {}, {} threads{}{}\n", cfg.task, cfg.model,
          summary.model_description, cfg.out, num_threads(),
          comm.size() > 1 ? fmt::format(" on each of {} ranks ({})", comm.size(), comm.describe())
                          : "",
          summary.start_step ? fmt::format(", resuming at step {}", summary.start_step) : "");
      std::fflush(out);
    }
  }

  const std::vector<Var> params = model->module().parameters();
  std::optional<distributed::GradientSync> sync;
  if (comm.size() > 1) sync.emplace(comm, params);
  auto step = [&](int64_t s) {
    std::vector<data::Example> batch = stream.next(cfg.batch_size);
    if (sync) {  // the whole global batch was drawn; this rank keeps its slice
      const distributed::Slice mine =
          distributed::rank_slice(cfg.batch_size, comm.rank(), comm.size());
      batch = std::vector<data::Example>(batch.begin() + mine.begin, batch.begin() + mine.end);
    }
    opt.set_lr(schedule->lr(s));
    opt.zero_grad();
    const LossOut l = model->loss(batch);
    l.loss.backward();
    StepStats stats{l.loss.item(), l.tokens, opt.lr()};
    if (sync) {
      const distributed::GlobalLoss g =
          sync->sum(stats.loss, stats.tokens, fmt::format("step {}", s));
      stats.loss = g.loss;
      stats.tokens = g.tokens;
    }
    if (cfg.clip > 0) clip_grad_norm(params, cfg.clip);
    opt.step();
    return stats;
  };
  auto eval = [&](int64_t) { return evaluate(*model, setup, comm).metrics; };
  const Metadata extra{{"config", config_json(cfg).dump()},
                       {"threads", std::to_string(num_threads())},
                       {"ranks", std::to_string(comm.size())}};
  CheckpointFn checkpoint;
  if (lead) checkpoint = [&](int64_t s) { save_checkpoint(cfg.save, state, s, extra); };
  const ProgressMode progress = !lead                     ? ProgressMode::kOff
                                : cfg.progress == "bar"   ? ProgressMode::kBar
                                : cfg.progress == "lines" ? ProgressMode::kLines
                                : cfg.progress == "off"   ? ProgressMode::kOff
                                                          : ProgressMode::kAuto;
  const bool has_target = cfg.target > 0 && setup.main_metric != "perplexity";
  std::function<bool(bool)> time_vote;
  if (comm.size() > 1)
    time_vote = [&](bool stop) {  // rank 0's clock decides for every rank
      double v[1] = {lead && stop ? 1.0 : 0.0};
      comm.sum_in_rank_order(v, "the time-limit decision");
      return v[0] > 0;
    };
  Trainer trainer({.max_steps = cfg.steps,
                   .eval_every = cfg.eval_every,
                   .log_every = std::max<int64_t>(1, std::min<int64_t>(50, cfg.steps / 20)),
                   .target_metric = has_target ? setup.main_metric : "",
                   .target_value = cfg.target,
                   .max_seconds = cfg.max_seconds,
                   .checkpoint_every = cfg.checkpoint_every,
                   .csv_path = lead ? (fs::path(cfg.out) / "metrics.csv").string() : "",
                   .jsonl_path = lead ? (fs::path(cfg.out) / "metrics.jsonl").string() : "",
                   .progress = progress,
                   .time_limit_vote = time_vote},
                  step, eval, checkpoint);
  summary.result = trainer.run(summary.start_step);
  distributed::require_identical_weights(comm, model->module(),
                                         fmt::format("after step {}", summary.result.last_step));

  const Evaluation final_ev = evaluate(*model, setup, comm);
  summary.final_eval = final_ev.metrics;
  summary.exact_match_by_length = final_ev.exact_by_length;
  nlohmann::json r;
  r["task"] = cfg.task;
  r["model"] = cfg.model;
  r["model_description"] = summary.model_description;
  r["main_metric"] = setup.main_metric;
  r["final_eval"] = summary.final_eval;
  nlohmann::json by_len =
      nlohmann::json::array();  // in length order (object keys would sort as text)
  for (const auto& [len, v] : summary.exact_match_by_length)
    by_len.push_back({{"length", len}, {"exact_match", v}});
  r["exact_match_by_length"] = by_len;
  r["start_step"] = summary.start_step;
  r["last_step"] = summary.result.last_step;
  r["stop_reason"] = summary.result.stop_reason;
  r["reached_target"] = summary.result.reached_target;
  r["wall_seconds"] = summary.result.wall_seconds;
  r["train_seconds"] = summary.result.train_seconds;
  r["tokens"] = summary.result.tokens;
  r["tokens_per_second"] = summary.result.tokens_per_second;
  r["threads"] = num_threads();
  r["ranks"] = comm.size();
  if (!lead) return summary;  // the files are rank 0's
  write_file_atomically((fs::path(cfg.out) / "results.json").string(), r.dump(2) + "\n");
  if (!final_ev.answers.empty())
    write_file_atomically((fs::path(cfg.out) / "samples.txt").string(),
                          samples_text(setup, final_ev));
  return summary;
}

int run_train_command(const TrainConfig& cfg) {
  const TrainSummary s = train_task(cfg);
  if (distributed::world().rank() != 0) return 0;  // rank 0 reports for the job
  fmt::print("\n{} after step {} ({}), {:.1f} s wall, {:.0f} tokens/s\n",
             s.result.reached_target ? "target reached" : "finished", s.result.last_step,
             s.result.stop_reason, s.result.wall_seconds, s.result.tokens_per_second);
  for (const auto& [k, v] : s.final_eval) fmt::print("  {:<16} {:.4f}\n", k, v);
  if (!s.exact_match_by_length.empty()) {
    fmt::print("  exact match by held-out length:\n");
    for (const auto& [len, v] : s.exact_match_by_length)
      fmt::print("    {:>4}  {:6.1f}%\n", len, 100 * v);
  }
  fmt::print("  written to {}\n", s.run_dir);
  return 0;
}

}  // namespace attn::train
