#include "train/run/train_config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "autograd/error.h"
#include "data/corpus.h"
#include "data/utf8.h"
#include "nn/feedforward_registry.h"
#include "nn/positional/position_kind.h"
#include "nn/positional/score_bias_registry.h"
#include "train/options/groups.h"

namespace attn::train {

namespace {

using options::Config;

// "train: " before a usage error from the options system, so the message says which command.
template <class F>
auto as_train_usage(F&& f) {
  try {
    return f();
  } catch (const UsageError& e) {
    throw UsageError(std::string("train: ") + e.what());
  }
}

void require(bool ok, const std::string& message) {
  if (!ok) throw UsageError("train: " + message);
}

bool is_recurrent(const std::string& model) {
  return model == "lstm" || model == "gru" || model == "rnn";
}

bool is_classification_task(const std::string& task) {
  return task == "anagram" || task == "longrange";
}

// The built-in schemes, then every score bias a --plugin registered (loaded before the options
// are parsed).
std::vector<std::string> positional_choices() {
  std::vector<std::string> choices{"auto"};
  for (const auto& n : nn::position_kind_names()) choices.push_back(n);
  for (const nn::ScoreBiasRow& r : nn::score_bias_registry().rows()) choices.push_back(r.name);
  return choices;
}

void add_task_fields(Config& cfg, const TrainConfig& d) {
  cfg.heading("Task");
  cfg.add_string("task", d.task, "what to learn", train_task_names())
      .add_string("model", d.model, "which network", train_model_names())
      .add_string("mixer", d.mixer,
                  "--model mixer: softmax linear window, the zoo's, S6 or a --plugin row "
                  "(attnlab list --plugin F shows them)")
      .add_string("alphabet", d.alphabet, "characters of reversal/copy/sort/longrange")
      .add_int("num_pairs", d.num_pairs, "recall: key-value pairs; khop: nodes", {.min = 1})
      .add_int("hops", d.hops, "khop: pointer hops k", {.min = 1})
      .add_string("longrange_mode", d.longrange_mode,
                  "longrange: match (two distant tokens) or majority", {"match", "majority"})
      .add_string("text_file", d.text_file,
                  "charlm: UTF-8 text file (empty: built-in toy grammar)");
}

// The model group plus the switches only `attnlab train` has, under the same heading.
void add_model_and_block_fields(Config& cfg, const TrainConfig& d) {
  options::add_model_fields(cfg, {.d_model = d.d_model,
                                  .nhead = d.nhead,
                                  .n_kv_heads = d.n_kv_heads,
                                  .num_layers = d.num_layers,
                                  .dim_ff = d.dim_ff,
                                  .dropout = d.dropout,
                                  .hidden = d.hidden});
  cfg.heading(options::kModelHeading);
  cfg.add_bool("norm_first", d.norm_first, "pre-norm (true) or the 2017 post-norm (false)")
      .add_bool("layer_norm", d.layer_norm, "ablation: false drops every layer norm of the blocks")
      .add_bool("residual", d.residual, "ablation: false drops the residual connections")
      .add_bool("feedforward", d.feedforward, "ablation: false drops the feed-forward sublayers")
      .add_string("ffn_block", d.ffn_block,
                  "gpt: a --plugin's feed-forward block for every layer (empty: the built-in "
                  "GELU block; attnlab list --plugin F shows them)")
      .add_bool("src_eos", d.src_eos, "seq2seq: end each source sequence with an EOS token")
      .add_string("positional", d.positional,
                  "transformers: the positional scheme (auto: the model's own)",
                  positional_choices())
      .add_string("score", d.score,
                  "transformers: attention score dot (q.k/sqrt(d), the paper) or additive "
                  "(Bahdanau)",
                  {"dot", "additive"})
      .add_string("attention", d.attention, "recurrent seq2seq attention",
                  {"none", "bahdanau", "luong_dot", "luong_general"});
}

void add_training_fields(Config& cfg, const TrainConfig& d) {
  options::add_data_fields(cfg, {.min_len = d.min_len,
                                 .max_len = d.max_len,
                                 .eval_min_len = d.eval_min_len,
                                 .eval_max_len = d.eval_max_len,
                                 .seq_len = d.seq_len,
                                 .block_len = d.block_len});
  options::add_optimizer_fields(cfg, {.steps = d.steps,
                                      .batch_size = d.batch_size,
                                      .lr = d.lr,
                                      .schedule = d.schedule,
                                      .warmup = d.warmup,
                                      .weight_decay = d.weight_decay,
                                      .clip = d.clip});
  cfg.heading(options::kOptimizerHeading);
  cfg.add_real("label_smoothing", d.label_smoothing, "cross-entropy label smoothing",
               {.min = 0, .max = 1, .max_exclusive = true});
  options::add_eval_fields(cfg, {.eval_size = d.eval_size,
                                 .eval_every = d.eval_every,
                                 .target = d.target,
                                 .max_seconds = d.max_seconds});
  options::add_seed_field(cfg, static_cast<int64_t>(d.seed),
                          "seed of every generator (weights, data, dropout)");
  cfg.heading("Files and progress");
  cfg.add_string("out", d.out, "run folder (default runs/train-<task>-<model>-<time>)")
      .add_string("save", d.save, "checkpoint path (default <out>/checkpoint.safetensors)")
      .add_string("resume", d.resume, "continue from this checkpoint")
      .add_int("checkpoint_every", d.checkpoint_every,
               "steps between checkpoints (0: only at the end)", {.min = 0})
      .add_string("progress", d.progress, "progress display", {"auto", "bar", "lines", "off"});
}

void validate_ffn_block(const TrainConfig& c) {
  require(c.model == "gpt",
          fmt::format("--ffn_block {} needs --model gpt (--model {} builds its own blocks)",
                      c.ffn_block, c.model));
  require(c.feedforward, fmt::format("--ffn_block {} needs --feedforward true", c.ffn_block));
  const std::vector<std::string> names = nn::feed_forward_registry().names();
  require(nn::feed_forward_registry().find(c.ffn_block) != nullptr,
          fmt::format("--ffn_block: unknown '{}' ({}; a --plugin file adds its own, and "
                      "attnlab list --plugin FILE shows them)",
                      c.ffn_block,
                      names.empty() ? std::string("no block is loaded")
                                    : fmt::format("choose from {}", fmt::join(names, " "))));
}

}  // namespace

options::Config train_options(const TrainConfig& defaults) {
  Config cfg;
  add_task_fields(cfg, defaults);
  add_model_and_block_fields(cfg, defaults);
  add_training_fields(cfg, defaults);
  return cfg;
}

TrainConfig read_train_config(const options::Config& cfg) {
  TrainConfig c;
  c.task = cfg.get_string("task");
  c.model = cfg.get_string("model");
  c.mixer = cfg.get_string("mixer");
  c.alphabet = cfg.get_string("alphabet");
  c.num_pairs = cfg.get_int("num_pairs");
  c.hops = cfg.get_int("hops");
  c.longrange_mode = cfg.get_string("longrange_mode");
  c.text_file = cfg.get_string("text_file");
  const options::ModelSettings m = options::read_model(cfg);
  c.d_model = m.d_model, c.nhead = m.nhead, c.n_kv_heads = m.n_kv_heads;
  c.num_layers = m.num_layers, c.dim_ff = m.dim_ff, c.dropout = m.dropout, c.hidden = m.hidden;
  c.norm_first = cfg.get_bool("norm_first");
  c.layer_norm = cfg.get_bool("layer_norm");
  c.residual = cfg.get_bool("residual");
  c.feedforward = cfg.get_bool("feedforward");
  c.ffn_block = cfg.get_string("ffn_block");
  c.src_eos = cfg.get_bool("src_eos");
  c.positional = cfg.get_string("positional");
  c.score = cfg.get_string("score");
  c.attention = cfg.get_string("attention");
  const options::DataSettings data = options::read_data(cfg);
  c.min_len = data.min_len, c.max_len = data.max_len;
  c.eval_min_len = data.eval_min_len, c.eval_max_len = data.eval_max_len;
  c.seq_len = data.seq_len, c.block_len = data.block_len;
  const options::OptimizerSettings opt = options::read_optimizer(cfg);
  c.steps = opt.steps, c.batch_size = opt.batch_size, c.lr = opt.lr, c.schedule = opt.schedule;
  c.warmup = opt.warmup, c.weight_decay = opt.weight_decay, c.clip = opt.clip;
  c.label_smoothing = cfg.get_real("label_smoothing");
  const options::EvalSettings eval = options::read_eval(cfg);
  c.eval_size = eval.eval_size, c.eval_every = eval.eval_every;
  c.target = eval.target, c.max_seconds = eval.max_seconds;
  c.seed = options::read_seed(cfg);
  c.out = cfg.get_string("out");
  c.save = cfg.get_string("save");
  c.resume = cfg.get_string("resume");
  c.checkpoint_every = cfg.get_int("checkpoint_every");
  c.progress = cfg.get_string("progress");
  return c;
}

bool is_transformer_model(const std::string& model) {
  return model == "transformer" || model == "gpt" || model == "bert";
}

std::string resolved_positional(const TrainConfig& c) {
  if (c.positional != "auto") return c.positional;
  if (!is_transformer_model(c.model)) return "none";
  if (c.model == "transformer" && !is_classification_task(c.task)) return "sinusoidal";
  return "learned";
}

const std::vector<std::string>& train_task_names() {
  static const std::vector<std::string> names{"reversal", "copy",    "sort",      "recall",
                                              "khop",     "anagram", "longrange", "charlm"};
  return names;
}

const std::vector<std::string>& train_model_names() {
  static const std::vector<std::string> names{"transformer", "gpt", "bert", "lstm",
                                              "gru",         "rnn", "mixer"};
  return names;
}

std::vector<std::string> train_option_names() {
  return train_options().names();
}

void set_train_option(TrainConfig& c, const std::string& key, const std::string& text) {
  Config cfg = train_options(c);
  as_train_usage([&] { cfg.set(key, text); });
  c = read_train_config(cfg);
}

std::string get_train_option(const TrainConfig& c, const std::string& key) {
  return train_options(c).text(options::canonical_field_name(key));
}

std::string train_options_help(const TrainConfig& now) {
  // The defaults are TrainConfig's; values the user changed show as "now ...".
  Config cfg = train_options();
  const Config given = train_options(now);
  for (const auto& name : cfg.names()) cfg.set(name, given.text(name));
  return cfg.help_text();
}

int64_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return static_cast<int64_t>(::sysconf(_SC_PHYS_PAGES)) * ::sysconf(_SC_PAGESIZE);
}

int64_t estimate_train_memory(const TrainConfig& c) {
  // Sizes in floats; a generous upper bound is the point, not precision.
  const double V = 256;  // a bound on every built-in vocabulary (charlm files may be larger)
  double T = static_cast<double>(std::max(c.max_len, c.eval_max_len)) + 2;
  if (c.task == "longrange") T = static_cast<double>(c.seq_len) + 1;
  if (c.task == "charlm") T = static_cast<double>(c.block_len);
  if (c.task == "recall" || c.task == "khop") T = 2.0 * static_cast<double>(c.num_pairs) + 3;
  if (c.model == "gpt" || c.model == "mixer") T *= 2;  // prompt and answer in one sequence
  const double B = static_cast<double>(
      std::max(c.batch_size, c.eval_size > 0 ? std::min<int64_t>(c.eval_size, 256) : 1));
  const double L = static_cast<double>(c.num_layers);
  double params = 0, acts = 0;
  if (is_recurrent(c.model)) {
    const double H = static_cast<double>(c.hidden);
    params = 2 * V * H + 2 * L * 4 * (2 * H * H + 2 * H) + 4 * H * H + 2 * V * H;
    acts = B * T * H * L * 2 * 24 + B * T * T * 4 + B * T * V * 3;
  } else {
    const double d = static_cast<double>(c.d_model), f = static_cast<double>(c.dim_ff);
    const double h = static_cast<double>(c.nhead);
    const double stacks = c.model == "transformer" ? 2.5 : 1.0;  // encoder + decoder (+ cross)
    params = 2 * V * d + stacks * L * (4 * d * d + 2 * d * f + 8 * d);
    acts = stacks * L * (B * T * (24 * d + 4 * f) + 4 * B * h * T * T) + B * T * V * 3;
    // Additive scores keep q_i + k_j and its tanh, d/h floats per pair, for every attention.
    if (c.score == "additive") acts += stacks * L * 2 * B * T * T * d;
  }
  const double floats = 4 * params + acts;  // weights, gradients, two Adam moments; activations
  return static_cast<int64_t>(floats * sizeof(float) * 1.5);  // allocator slack
}

void validate_train_config(const TrainConfig& c) {
  // Each field's own type, range and choices: the values go through the options system, as
  // they would from the command line (a TrainConfig built in code is checked the same way).
  Config cfg = train_options();
  const Config given = train_options(c);
  as_train_usage([&] {
    for (const auto& name : cfg.names()) cfg.set(name, given.text(name));
    options::check_model(cfg);
    options::check_data(cfg);
    options::check_optimizer(cfg);
  });
  const bool seq2seq = c.task == "reversal" || c.task == "copy" || c.task == "sort" ||
                       c.task == "recall" || c.task == "khop";
  const bool classify = is_classification_task(c.task);
  if (seq2seq)
    require(c.model != "bert",
            fmt::format("--model bert is encoder-only and cannot generate the output of '{}'; use "
                        "transformer, gpt, lstm, gru or rnn",
                        c.task));
  if (c.model == "mixer")
    validate_mixer_choice(c);
  else
    require(c.mixer == TrainConfig{}.mixer,
            fmt::format("--mixer {} needs --model mixer (--model {} has its own attention)",
                        c.mixer, c.model));
  if (!c.ffn_block.empty()) validate_ffn_block(c);
  if (classify)
    require(c.model != "gpt" && c.model != "mixer",
            fmt::format("'{}' is a classification task; use --model bert or transformer "
                        "(encoder + classifier), or lstm, gru, rnn",
                        c.task));
  if (c.task == "charlm")
    require(c.model != "transformer",
            "charlm is language modelling; use --model gpt (or lstm, gru, rnn; bert trains with "
            "masked-language-model masking)");
  require(c.n_kv_heads == 0 || c.n_kv_heads == c.nhead || c.score == "dot",
          fmt::format("--n_kv_heads {} needs --score dot: additive scores keep one key per query "
                      "head",
                      c.n_kv_heads));
  require(c.n_kv_heads == 0 || c.n_kv_heads == c.nhead || !seq2seq || c.model != "transformer",
          fmt::format("--n_kv_heads {} is for gpt and bert (and encoder classifiers): the "
                      "encoder-decoder's decoder has no grouped-query attention; use --model gpt "
                      "for '{}'",
                      c.n_kv_heads, c.task));
  require(is_transformer_model(c.model) || resolved_positional(c) == "none",
          fmt::format("--positional {} is for the transformer models (transformer, gpt, bert); "
                      "--model {} is recurrent and reads the order from its recurrence (use "
                      "--positional auto or none)",
                      c.positional, c.model));
  require(c.model == "gpt" || !nn::score_bias_registry().find(c.positional),
          fmt::format("--positional {} is a plugin's score bias: it needs --model gpt (the "
                      "decoder-only model adds it to every head's scores)",
                      c.positional));
  require(resolved_positional(c) != "rope" || (c.d_model / std::max<int64_t>(c.nhead, 1)) % 2 == 0,
          fmt::format("--positional rope rotates pairs of channels: d_model/nhead ({}/{}) must "
                      "be even",
                      c.d_model, c.nhead));
  require(!c.alphabet.empty(), "--alphabet must not be empty");
  try {  // checked here, before the run folder is claimed, so a bad value writes nothing
    data::utf8_chars(c.alphabet, "--alphabet");
  } catch (const Error& e) {
    throw UsageError(std::string("train: ") + e.what());
  }
  if (c.task == "charlm" && !c.text_file.empty()) {
    try {
      data::load_text_file(c.text_file);
    } catch (const Error& e) {
      throw UsageError(std::string("train: --text_file: ") + e.what());
    }
  }
  const int64_t need = estimate_train_memory(c), have = available_memory_bytes();
  require(need <= have,
          fmt::format("this configuration needs about {:.1f} GB (weights, optimizer state and "
                      "activations) but the machine has {:.1f} GB available; reduce --batch_size, "
                      "--d_model/--hidden, --num_layers or the sequence lengths",
                      static_cast<double>(need) / 1e9, static_cast<double>(have) / 1e9));
}

}  // namespace attn::train
