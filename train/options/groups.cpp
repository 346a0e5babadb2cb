#include "train/options/groups.h"

#include <fmt/format.h>

#include <variant>

#include "autograd/error.h"

namespace attn::train::options {

namespace {

// Fields added while this lives list under `heading`; the caller's heading comes back after.
class HeadingScope {
 public:
  HeadingScope(Config& cfg, const char* heading) : cfg_(cfg), before_(cfg.heading()) {
    cfg_.heading(heading);
  }
  ~HeadingScope() { cfg_.heading(before_); }
  HeadingScope(const HeadingScope&) = delete;
  HeadingScope& operator=(const HeadingScope&) = delete;

 private:
  Config& cfg_;
  std::string before_;
};

// One member of a group: its flag, where its default lives in the group's Defaults (a member
// without one is not declared), where its value goes in the group's Settings, help, bounds.
template <class T, class D, class S>
struct Typed {
  const char* name;
  std::optional<T> D::*default_value;
  T S::*value;
  const char* help;
  Range range;
  std::vector<std::string> choices;
};
template <class D, class S>
using Member = std::variant<Typed<int64_t, D, S>, Typed<double, D, S>, Typed<std::string, D, S>>;

template <class T, class D, class S>
Member<D, S> row(const char* name,
                 std::optional<T> D::*default_value,
                 T S::*value,
                 const char* help,
                 Range range = {},
                 std::vector<std::string> choices = {}) {
  return Typed<T, D, S>{name, default_value, value, help, range, std::move(choices)};
}

template <class D, class S>
void add_members(Config& cfg,
                 const char* heading,
                 const D& defaults,
                 const std::vector<Member<D, S>>& rows) {
  HeadingScope scope(cfg, heading);
  for (const auto& member : rows)
    std::visit(
        [&](const auto& m) {
          const auto& def = defaults.*m.default_value;
          if (!def) return;
          using T = std::decay_t<decltype(*def)>;
          if constexpr (std::is_same_v<T, int64_t>)
            cfg.add_int(m.name, *def, m.help, m.range);
          else if constexpr (std::is_same_v<T, double>)
            cfg.add_real(m.name, *def, m.help, m.range);
          else
            cfg.add_string(m.name, *def, m.help, m.choices);
        },
        member);
}

// The declared members' values; the others keep Settings' neutral value.
template <class D, class S>
S read_members(const Config& cfg, const std::vector<Member<D, S>>& rows) {
  S settings;
  for (const auto& member : rows)
    std::visit(
        [&](const auto& m) {
          if (!cfg.has(m.name)) return;
          auto& out = settings.*m.value;
          using T = std::decay_t<decltype(out)>;
          if constexpr (std::is_same_v<T, int64_t>)
            out = cfg.get_int(m.name);
          else if constexpr (std::is_same_v<T, double>)
            out = cfg.get_real(m.name);
          else
            out = cfg.get_string(m.name);
        },
        member);
  return settings;
}

constexpr Range kPositive{.min = 1};
constexpr Range kNonNegative{.min = 0};

}  // namespace

// ---- model -------------------------------------------------------------------------------------

namespace {
const std::vector<Member<ModelDefaults, ModelSettings>>& model_rows() {
  using D = ModelDefaults;
  using S = ModelSettings;
  static const std::vector<Member<D, S>> rows{
      row("d_model", &D::d_model, &S::d_model, "token vector width (d_model)", kPositive),
      row("nhead", &D::nhead, &S::nhead, "attention heads (must divide d_model)", kPositive),
      row("n_kv_heads", &D::n_kv_heads, &S::n_kv_heads,
          "key/value heads: 0 = nhead (MHA), 1 = MQA, else GQA (must divide nhead)", kNonNegative),
      row("num_layers", &D::num_layers, &S::num_layers,
          "layers per stack (recurrent: stacked layers)", kPositive),
      row("dim_ff", &D::dim_ff, &S::dim_ff, "feed-forward inner width", kPositive),
      row("dropout", &D::dropout, &S::dropout, "dropout probability",
          {.min = 0, .max = 1, .max_exclusive = true}),
      row("hidden", &D::hidden, &S::hidden, "recurrent hidden size", kPositive),
  };
  return rows;
}
}  // namespace

void add_model_fields(Config& cfg, const ModelDefaults& defaults) {
  add_members(cfg, kModelHeading, defaults, model_rows());
}

ModelSettings read_model(const Config& cfg) {
  return read_members(cfg, model_rows());
}

void check_model(const Config& cfg) {
  if (cfg.has("nhead") && cfg.has("d_model")) require_divides(cfg, "nhead", "d_model");
  if (cfg.has("n_kv_heads") && cfg.has("nhead") && cfg.get_int("n_kv_heads") != 0) {
    const int64_t kv = cfg.get_int("n_kv_heads"), heads = cfg.get_int("nhead");
    if (heads % kv != 0)
      throw UsageError(fmt::format(
          "--n_kv_heads {} must divide --nhead {}: each key/value head serves nhead/n_kv_heads "
          "query heads (0 means nhead)",
          kv, heads));
  }
}

// ---- optimizer and schedule ------------------------------------------------------------------

const std::vector<std::string>& schedule_names() {
  static const std::vector<std::string> names{"constant", "warmup", "noam", "cosine"};
  return names;
}

namespace {
const std::vector<Member<OptimizerDefaults, OptimizerSettings>>& optimizer_rows() {
  using D = OptimizerDefaults;
  using S = OptimizerSettings;
  static const std::vector<Member<D, S>> rows{
      row("steps", &D::steps, &S::steps, "optimizer steps (at most)", kPositive),
      row("batch_size", &D::batch_size, &S::batch_size, "examples per step", kPositive),
      row("lr", &D::lr, &S::lr, "peak learning rate (AdamW; every schedule, noam included)",
          {.min = 0, .min_exclusive = true}),
      row("schedule", &D::schedule, &S::schedule,
          "learning-rate schedule: constant, warmup (linear rise), noam (rise, then "
          "1/sqrt(step)), cosine (rise, then cosine decay)",
          {}, schedule_names()),
      row("warmup", &D::warmup, &S::warmup, "warm-up steps (linear rise of the learning rate)",
          kNonNegative),
      row("weight_decay", &D::weight_decay, &S::weight_decay, "AdamW decoupled weight decay",
          kNonNegative),
      row("clip", &D::clip, &S::clip, "clip the global gradient norm to this (0: off)",
          kNonNegative),
  };
  return rows;
}
}  // namespace

void add_optimizer_fields(Config& cfg, const OptimizerDefaults& defaults) {
  add_members(cfg, kOptimizerHeading, defaults, optimizer_rows());
}

OptimizerSettings read_optimizer(const Config& cfg) {
  for (const char* required : {"steps", "batch_size", "lr"})
    if (!cfg.has(required))
      throw Error(fmt::format(
          "read_optimizer: the options declare no '{}' (add it with add_optimizer_fields)",
          required));
  return read_members(cfg, optimizer_rows());
}

void check_optimizer(const Config& cfg) {
  if (!cfg.has("schedule")) return;
  const std::string& schedule = cfg.get_string("schedule");
  const int64_t warmup = cfg.has("warmup") ? cfg.get_int("warmup") : 0;
  if (schedule == "noam" && warmup <= 0)
    throw UsageError("--schedule noam needs --warmup > 0 (its peak is at the end of the warm-up)");
  if (schedule == "cosine" && cfg.has("steps") && cfg.get_int("steps") <= warmup)
    throw UsageError(fmt::format("--schedule cosine needs --steps ({}) > --warmup ({})",
                                 cfg.get_int("steps"), warmup));
}

// ---- data ------------------------------------------------------------------------------------

namespace {
const std::vector<Member<DataDefaults, DataSettings>>& data_rows() {
  using D = DataDefaults;
  using S = DataSettings;
  static const std::vector<Member<D, S>> rows{
      row("min_len", &D::min_len, &S::min_len, "shortest training sequence", kPositive),
      row("max_len", &D::max_len, &S::max_len, "longest training sequence", kPositive),
      row("eval_min_len", &D::eval_min_len, &S::eval_min_len, "shortest held-out sequence",
          kPositive),
      row("eval_max_len", &D::eval_max_len, &S::eval_max_len, "longest held-out sequence",
          kPositive),
      row("seq_len", &D::seq_len, &S::seq_len, "sequence length", kPositive),
      row("block_len", &D::block_len, &S::block_len, "tokens per language-model window", kPositive),
  };
  return rows;
}
}  // namespace

void add_data_fields(Config& cfg, const DataDefaults& defaults) {
  add_members(cfg, kDataHeading, defaults, data_rows());
}

DataSettings read_data(const Config& cfg) {
  return read_members(cfg, data_rows());
}

void check_data(const Config& cfg) {
  for (const auto& [low, high] :
       {std::pair{"min_len", "max_len"}, {"eval_min_len", "eval_max_len"}})
    if (cfg.has(low) && cfg.has(high) && cfg.get_int(high) < cfg.get_int(low))
      throw UsageError(fmt::format("--{} ({}) must be >= --{} ({})", high, cfg.get_int(high), low,
                                   cfg.get_int(low)));
}

// ---- evaluation and stopping ------------------------------------------------------------------

namespace {
const std::vector<Member<EvalDefaults, EvalSettings>>& eval_rows() {
  using D = EvalDefaults;
  using S = EvalSettings;
  static const std::vector<Member<D, S>> rows{
      row("eval_size", &D::eval_size, &S::eval_size, "held-out examples", kPositive),
      row("eval_every", &D::eval_every, &S::eval_every,
          "steps between evaluations (0: only at the end)", kNonNegative),
      row("target", &D::target, &S::target,
          "stop once the main held-out metric reaches this (0: never)", {.min = 0, .max = 1}),
      row("max_seconds", &D::max_seconds, &S::max_seconds,
          "stop after this much wall time (0: no limit)", kNonNegative),
  };
  return rows;
}
}  // namespace

void add_eval_fields(Config& cfg, const EvalDefaults& defaults) {
  add_members(cfg, kEvalHeading, defaults, eval_rows());
}

EvalSettings read_eval(const Config& cfg) {
  return read_members(cfg, eval_rows());
}

// ---- seed --------------------------------------------------------------------------------------

void add_seed_field(Config& cfg, int64_t default_seed, const std::string& help) {
  HeadingScope scope(cfg, kSeedHeading);
  cfg.add_int("seed", default_seed, help, kNonNegative);
}

uint64_t read_seed(const Config& cfg) {
  return static_cast<uint64_t>(cfg.get_int("seed"));
}

}  // namespace attn::train::options
