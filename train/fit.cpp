#include "train/fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <typeinfo>

#include "autograd/error.h"
#include "autograd/tape.h"
#include "train/checkpoint.h"
#include "train/distributed/communicator.h"
#include "train/distributed/data_parallel.h"
#include "train/optim/adam.h"
#include "train/optim/clip.h"
#include "train/optim/sgd.h"

namespace attn::train {

std::unique_ptr<Optimizer> make_optimizer(const std::vector<Var>& params,
                                          const OptimizerSettings& o) {
  if (o.kind == "adam")
    return std::make_unique<Adam>(params, AdamOptions{.lr = o.lr, .weight_decay = o.weight_decay});
  if (o.kind == "adamw")
    return std::make_unique<AdamW>(params, AdamOptions{.lr = o.lr, .weight_decay = o.weight_decay});
  if (o.kind == "sgd")
    return std::make_unique<Sgd>(
        params, Sgd::Options{.lr = o.lr, .momentum = o.momentum, .weight_decay = o.weight_decay});
  throw Error(fmt::format("fit: unknown optimizer '{}' (expected adam, adamw or sgd)", o.kind));
}

std::unique_ptr<LrSchedule> make_lr_schedule(const OptimizerSettings& o, int64_t steps) {
  ScheduleConfig s{
      .kind = o.schedule, .lr = o.lr, .warmup = o.warmup, .total = steps, .min_lr = o.min_lr};
  if (o.schedule == "noam") {
    // lr is the peak; the 2017 formula peaks at factor / sqrt(d_model * warmup).
    if (o.d_model <= 0) throw Error("fit: the noam schedule needs the model width (d_model)");
    s.d_model = o.d_model;
    s.factor = o.lr * std::sqrt(static_cast<double>(o.d_model * o.warmup));
  }
  return make_schedule(s);
}

Tensor BatchPart::rows(const Tensor& x) const {
  if (whole()) return x;
  if (x.rank() < 1 || x.size(0) != total)
    throw Error(fmt::format("fit: a batch tensor has {} rows where the global batch has {}",
                            x.rank() < 1 ? 0 : x.size(0), total));
  Shape shape = x.shape();
  shape[0] = size();
  Tensor out(shape);
  const int64_t per = x.numel() / total;
  std::copy(x.data() + begin * per, x.data() + end * per, out.data());
  return out;
}

namespace {

// The communicator of a rank on its own (FitSettings::this_rank_alone).
distributed::Communicator& alone() {
  static const std::unique_ptr<distributed::Communicator> single =
      distributed::make_single_process();
  return *single;
}

std::string who(const FitSettings& s) {
  return s.name.empty() ? "fit" : "fit '" + s.name + "'";
}

// Every check before the first step, on every rank together (an error on one is an error on
// all, exit 2 for a usage error).
void check_settings(const FitSettings& s, distributed::Communicator& comm) {
  distributed::all_or_none(comm, "the training settings", [&] {
    if (s.steps <= 0) throw Error(fmt::format("{}: steps must be > 0, got {}", who(s), s.steps));
    if (s.optimizer.clip < 0)
      throw Error(fmt::format("{}: clip must be >= 0, got {}", who(s), s.optimizer.clip));
    if (comm.size() == 1) return;
    if (!s.not_data_parallel.empty())
      throw UsageError(
          fmt::format("{} cannot train data-parallel on {} ranks: {}; run it "
                      "without mpirun",
                      who(s), comm.size(), s.not_data_parallel));
    if (s.batch_size < comm.size())
      throw UsageError(fmt::format(
          "{}: the batch of {} examples cannot be split over {} ranks (every rank needs at "
          "least one); lower the rank count or raise the batch size",
          who(s), s.batch_size, comm.size()));
  });
}

}  // namespace

Fit::Fit(nn::Module& model,
         FitSettings settings,
         LossFn loss,
         distributed::Communicator* comm_or_world)
    : model_(model),
      settings_(std::move(settings)),
      comm_(settings_.this_rank_alone ? alone()
            : comm_or_world           ? *comm_or_world
                                      : distributed::world()),
      loss_(std::move(loss)) {
  if (!loss_) throw Error(who(settings_) + ": a loss function is required");
  distributed::Communicator& comm = comm_;
  check_settings(settings_, comm);
  params_ = model_.parameters();
  optimizer_ = make_optimizer(params_, settings_.optimizer);
  schedule_ = make_lr_schedule(settings_.optimizer, settings_.steps);
  const int64_t total = std::max<int64_t>(settings_.batch_size, 1);
  const distributed::Slice mine = distributed::rank_slice(total, comm.rank(), comm.size());
  part_ = {mine.begin, mine.end, total};
  if (comm.size() > 1) sync_ = std::make_unique<distributed::GradientSync>(comm, params_);
}

Fit::~Fit() = default;

StepStats Fit::step_at(int64_t s) {
  optimizer_->zero_grad();
  StepLoss l = loss_(part_);
  if (l.loss.numel() != 1)
    throw Error(fmt::format("{}: the loss function must return a scalar loss, got shape {}",
                            who(settings_), shape_str(l.loss.shape())));
  const int64_t count = l.count > 0 ? l.count : part_.size();
  l.loss.backward();
  StepStats stats{l.loss.item(), count, 0};
  if (sync_) {
    const distributed::GlobalLoss g = sync_->sum(stats.loss, count, fmt::format("step {}", s));
    stats.loss = g.loss;
    stats.tokens = g.tokens;
  }
  items_seen_ += stats.tokens;
  if (after_backward_) after_backward_(s);
  if (settings_.optimizer.clip > 0) clip_grad_norm(params_, settings_.optimizer.clip);
  optimizer_->set_lr(schedule_->lr(s));
  optimizer_->step();
  stats.lr = optimizer_->lr();
  return stats;
}

StepStats Fit::step() {
  return step_at(optimizer_->steps_taken() + 1);
}

TrainResult Fit::run(EvalFn eval) {
  distributed::Communicator& comm = comm_;
  const bool lead = comm.rank() == 0;
  std::function<bool(bool)> time_vote;
  if (comm.size() > 1)
    time_vote = [&comm, lead](bool stop) {  // rank 0's clock decides for every rank
      double v[1] = {lead && stop ? 1.0 : 0.0};
      comm.sum_in_rank_order(v, "the time-limit decision");
      return v[0] > 0;
    };
  CheckpointFn checkpoint;
  const TrainingState state{.model = &model_, .optimizer = optimizer_.get()};
  if (lead && !settings_.checkpoint_path.empty())
    checkpoint = [&](int64_t s) {
      save_checkpoint(settings_.checkpoint_path, state, s,
                      {{"variant", settings_.name}, {"ranks", std::to_string(comm.size())}});
    };
  const std::string target = eval ? settings_.target_metric : "";
  Trainer trainer(
      {.max_steps = settings_.steps,
       .eval_every = settings_.eval_every,
       .log_every = settings_.log_every,
       .target_metric = target,
       .target_value = settings_.target_value,
       .lower_is_better = settings_.lower_is_better,
       .max_seconds = settings_.max_seconds,
       .checkpoint_every = settings_.checkpoint_every,
       .csv_path = lead ? settings_.csv_path : "",
       .progress = lead ? settings_.progress : ProgressMode::kOff,
       .divergence_factor = settings_.divergence_factor,
       .time_limit_vote = time_vote},
      [this](int64_t s) { return step_at(s); }, std::move(eval), checkpoint);
  TrainResult r;
  try {
    r = trainer.run();
  } catch (const Error&) {
    if (settings_.name.empty()) throw;
    rethrow_naming_variant(settings_.name);
  }
  if (comm.size() > 1)
    distributed::require_identical_weights(
        comm, model_, fmt::format("after step {} of '{}'", r.last_step, settings_.name));
  return r;
}

void rethrow_naming_variant(const std::string& variant) {
  try {
    throw;
  } catch (const TrainingDiverged& e) {
    const std::string note =
        detect_anomaly() && std::isfinite(e.loss())
            ? " (anomaly detection was on: no op produced a NaN/Inf, the loss grew but stayed "
              "finite)"
            : "";
    throw TrainingDiverged(fmt::format("variant '{}': {}{}", variant, e.what(), note), e.step(),
                           e.loss());
  } catch (const Error& e) {
    if (typeid(e) != typeid(Error) || !detect_anomaly()) throw;  // anomaly detection's: an Error
    throw Error(fmt::format("variant '{}': {}", variant, e.what()));
  }
}

TrainResult fit(nn::Module& model, const FitSettings& settings, LossFn loss, EvalFn eval) {
  Fit f(model, settings, std::move(loss));
  return f.run(std::move(eval));
}

}  // namespace attn::train
