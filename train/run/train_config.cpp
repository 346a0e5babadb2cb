#include "train/run/train_config.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <variant>

#include "autograd/error.h"
#include "data/corpus.h"
#include "data/utf8.h"
#include "nn/positional/position_kind.h"

namespace attn::train {

namespace {

using Member = std::variant<int64_t TrainConfig::*,
                            uint64_t TrainConfig::*,
                            double TrainConfig::*,
                            bool TrainConfig::*,
                            std::string TrainConfig::*>;

struct Option {
  const char* name;
  Member member;
  const char* help;
};

const std::vector<Option>& options() {
  using C = TrainConfig;
  static const std::vector<Option> table{
      {"task", &C::task, "reversal copy sort recall khop anagram longrange charlm"},
      {"model", &C::model, "transformer gpt bert lstm gru rnn mixer"},
      {"mixer", &C::mixer,
       "--model mixer: softmax linear window, the zoo's, S6 or a --plugin row (attnlab list "
       "--plugin F shows them)"},
      {"seed", &C::seed, "seed of every generator (weights, data, dropout)"},
      {"d_model", &C::d_model, "transformer width"},
      {"nhead", &C::nhead, "attention heads (must divide d_model)"},
      {"n_kv_heads", &C::n_kv_heads,
       "gpt/bert self-attention: key/value heads, 0 = nhead (MHA), 1 = MQA, else GQA"},
      {"num_layers", &C::num_layers, "layers per stack (recurrent: stacked layers)"},
      {"dim_ff", &C::dim_ff, "feed-forward inner width"},
      {"dropout", &C::dropout, "dropout probability"},
      {"norm_first", &C::norm_first, "pre-norm (true) or the 2017 post-norm (false)"},
      {"layer_norm", &C::layer_norm, "ablation: false drops every layer norm of the blocks"},
      {"residual", &C::residual, "ablation: false drops the residual connections"},
      {"feedforward", &C::feedforward, "ablation: false drops the feed-forward sublayers"},
      {"src_eos", &C::src_eos, "seq2seq: end each source sequence with an EOS token"},
      {"positional", &C::positional,
       "transformers: none learned sinusoidal rope alibi t5_bias (auto: the model's own)"},
      {"score", &C::score,
       "transformers: attention score dot (q.k/sqrt(d), the paper) or additive (Bahdanau)"},
      {"hidden", &C::hidden, "recurrent hidden size"},
      {"attention", &C::attention,
       "recurrent seq2seq attention: none bahdanau luong_dot luong_general"},
      {"min_len", &C::min_len, "shortest training sequence"},
      {"max_len", &C::max_len, "longest training sequence"},
      {"eval_min_len", &C::eval_min_len, "shortest held-out sequence"},
      {"eval_max_len", &C::eval_max_len, "longest held-out sequence"},
      {"alphabet", &C::alphabet, "characters of reversal/copy/sort/longrange"},
      {"num_pairs", &C::num_pairs, "recall: key-value pairs; khop: nodes"},
      {"hops", &C::hops, "khop: pointer hops k"},
      {"seq_len", &C::seq_len, "longrange: sequence length"},
      {"longrange_mode", &C::longrange_mode, "longrange: match (two distant tokens) or majority"},
      {"text_file", &C::text_file, "charlm: UTF-8 text file (empty: built-in toy grammar)"},
      {"block_len", &C::block_len, "charlm: characters per training window"},
      {"steps", &C::steps, "optimizer steps (at most)"},
      {"batch_size", &C::batch_size, "examples per step"},
      {"lr", &C::lr, "peak learning rate (every schedule, noam included)"},
      {"schedule", &C::schedule, "constant warmup noam cosine"},
      {"warmup", &C::warmup, "warm-up steps"},
      {"weight_decay", &C::weight_decay, "AdamW decoupled weight decay"},
      {"clip", &C::clip, "clip the global gradient norm to this (0: off)"},
      {"label_smoothing", &C::label_smoothing, "cross-entropy label smoothing"},
      {"eval_size", &C::eval_size, "held-out examples"},
      {"eval_every", &C::eval_every, "steps between evaluations (0: only at the end)"},
      {"target", &C::target, "stop once the main metric reaches this (0: never)"},
      {"max_seconds", &C::max_seconds, "stop after this much wall time (0: no limit)"},
      {"out", &C::out, "run folder"},
      {"save", &C::save, "checkpoint path (default <out>/checkpoint.safetensors)"},
      {"resume", &C::resume, "continue from this checkpoint"},
      {"checkpoint_every", &C::checkpoint_every, "steps between checkpoints (0: only at the end)"},
      {"progress", &C::progress, "auto bar lines off"},
  };
  return table;
}

std::string normalise(std::string key) {
  if (key.rfind("--", 0) == 0) key = key.substr(2);
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string closest(const std::string& word, const std::vector<std::string>& choices) {
  std::string best;
  size_t best_d = std::numeric_limits<size_t>::max();
  for (const auto& c : choices)
    if (const size_t d = edit_distance(word, c); d < best_d) best_d = d, best = c;
  return best_d <= std::max<size_t>(2, word.size() / 3) ? best : "";
}

const Option& find_option(const std::string& raw) {
  const std::string key = normalise(raw);
  for (const auto& o : options())
    if (key == o.name) return o;
  const std::string near = closest(key, train_option_names());
  throw UsageError(fmt::format("train: unknown option '--{}'{}", key,
                               near.empty() ? "" : fmt::format(" (did you mean --{}?)", near)));
}

// Whole-text number parsing with messages that say what is wrong: "12x" and "" do not parse,
// "1e309" and "99999999999999999999" are out of range, a seed cannot be negative.
template <class T>
T parse_number(const std::string& key, const std::string& text) {
  auto bad = [&](const std::string& why) {
    return UsageError(fmt::format("train: --{} {}, got '{}'", key, why, text));
  };
  errno = 0;
  char* end = nullptr;
  if constexpr (std::is_same_v<T, double>) {
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0') throw bad("expects a number (e.g. 0.003 or 3e-3)");
    if (errno == ERANGE)
      throw bad(std::isinf(v) || std::fabs(v) > 1
                    ? "is out of range: a double's magnitude is at most about 1.8e308"
                    : "is out of range: too close to zero for a double (below about 2.2e-308)");
    if (!std::isfinite(v)) throw bad("expects a finite number");
    return v;
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    if (text.find('-') != std::string::npos) throw bad("must be >= 0 (seeds are unsigned)");
    const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0') throw bad("expects a whole number >= 0");
    if (errno == ERANGE) throw bad("is out of range: at most 18446744073709551615");
    return v;
  } else {
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0') throw bad("expects a whole number");
    if (errno == ERANGE) throw bad("is out of range: at most 9223372036854775807 in magnitude");
    return v;
  }
}

void require(bool ok, const std::string& message) {
  if (!ok) throw UsageError("train: " + message);
}

void require_in(const std::string& field,
                const std::string& value,
                const std::vector<std::string>& allowed) {
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return;
  const std::string near = closest(value, allowed);
  throw UsageError(fmt::format("train: unknown {} '{}' (choose from: {}){}", field, value,
                               fmt::join(allowed, ", "),
                               near.empty() ? "" : fmt::format("; did you mean '{}'?", near)));
}

bool is_recurrent(const std::string& model) {
  return model == "lstm" || model == "gru" || model == "rnn";
}

bool is_classification_task(const std::string& task) {
  return task == "anagram" || task == "longrange";
}

}  // namespace

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
  std::vector<std::string> out;
  for (const auto& o : options()) out.push_back(o.name);
  return out;
}

void set_train_option(TrainConfig& c, const std::string& raw_key, const std::string& text) {
  const Option& o = find_option(raw_key);
  std::visit(
      [&](auto member) {
        using T = std::remove_reference_t<decltype(c.*member)>;
        if constexpr (std::is_same_v<T, std::string>) {
          c.*member = text;
        } else if constexpr (std::is_same_v<T, bool>) {
          if (text == "true" || text == "1" || text == "yes" || text == "on")
            c.*member = true;
          else if (text == "false" || text == "0" || text == "no" || text == "off")
            c.*member = false;
          else
            throw UsageError(
                fmt::format("train: --{} expects true or false, got '{}'", o.name, text));
        } else {
          c.*member = parse_number<T>(o.name, text);
        }
      },
      o.member);
}

std::string get_train_option(const TrainConfig& c, const std::string& key) {
  const Option& o = find_option(key);
  return std::visit(
      [&](auto member) -> std::string {
        using T = std::remove_reference_t<decltype(c.*member)>;
        if constexpr (std::is_same_v<T, std::string>)
          return c.*member;
        else if constexpr (std::is_same_v<T, bool>)
          return c.*member ? "true" : "false";
        else
          return fmt::format("{}", c.*member);
      },
      o.member);
}

std::string train_options_help() {
  const TrainConfig defaults;
  std::string out;
  for (const auto& o : options()) {
    std::string def = get_train_option(defaults, o.name);
    if (def.empty()) def = "\"\"";
    out += fmt::format("  --{:<18} {:<28} {}\n", o.name,
                       def.size() > 28 ? def.substr(0, 25) + "..." : def, o.help);
  }
  return out;
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
  require_in("task", c.task, train_task_names());
  require_in("model", c.model, train_model_names());
  const bool seq2seq = c.task == "reversal" || c.task == "copy" || c.task == "sort" ||
                       c.task == "recall" || c.task == "khop";
  const bool classify = is_classification_task(c.task);
  if (seq2seq)
    require(c.model != "bert",
            fmt::format("--model bert is encoder-only and cannot generate the output of '{}'; use "
                        "transformer, gpt, lstm, gru or rnn",
                        c.task));
  if (c.model == "mixer") validate_mixer_choice(c);
  if (classify)
    require(c.model != "gpt" && c.model != "mixer",
            fmt::format("'{}' is a classification task; use --model bert or transformer "
                        "(encoder + classifier), or lstm, gru, rnn",
                        c.task));
  if (c.task == "charlm")
    require(c.model != "transformer",
            "charlm is language modelling; use --model gpt (or lstm, gru, rnn; bert trains with "
            "masked-language-model masking)");
  require(c.d_model > 0, fmt::format("--d_model must be > 0, got {}", c.d_model));
  require(c.nhead > 0, fmt::format("--nhead must be > 0, got {}", c.nhead));
  require(c.d_model % c.nhead == 0,
          fmt::format("--nhead ({}) must divide --d_model ({}): each head gets d_model/nhead dims",
                      c.nhead, c.d_model));
  require(c.n_kv_heads >= 0 && (c.n_kv_heads == 0 || c.nhead % c.n_kv_heads == 0),
          fmt::format("--n_kv_heads ({}) must divide --nhead ({}): each key/value head serves "
                      "nhead/n_kv_heads query heads (0 means nhead)",
                      c.n_kv_heads, c.nhead));
  require(c.n_kv_heads == 0 || c.n_kv_heads == c.nhead || c.score == "dot",
          fmt::format("--n_kv_heads {} needs --score dot: additive scores keep one key per query "
                      "head",
                      c.n_kv_heads));
  require(c.n_kv_heads == 0 || c.n_kv_heads == c.nhead || !seq2seq || c.model != "transformer",
          fmt::format("--n_kv_heads {} is for gpt and bert (and encoder classifiers): the "
                      "encoder-decoder's decoder has no grouped-query attention; use --model gpt "
                      "for '{}'",
                      c.n_kv_heads, c.task));
  require(c.num_layers > 0, fmt::format("--num_layers must be > 0, got {}", c.num_layers));
  require(c.dim_ff > 0, fmt::format("--dim_ff must be > 0, got {}", c.dim_ff));
  require(c.dropout >= 0 && c.dropout < 1,
          fmt::format("--dropout must be in [0, 1), got {}", c.dropout));
  {
    std::vector<std::string> choices{"auto"};
    for (const auto& n : nn::position_kind_names()) choices.push_back(n);
    require_in("positional", c.positional, choices);
  }
  require(is_transformer_model(c.model) || resolved_positional(c) == "none",
          fmt::format("--positional {} is for the transformer models (transformer, gpt, bert); "
                      "--model {} is recurrent and reads the order from its recurrence (use "
                      "--positional auto or none)",
                      c.positional, c.model));
  require(resolved_positional(c) != "rope" || (c.d_model / std::max<int64_t>(c.nhead, 1)) % 2 == 0,
          fmt::format("--positional rope rotates pairs of channels: d_model/nhead ({}/{}) must "
                      "be even",
                      c.d_model, c.nhead));
  require(c.hidden > 0, fmt::format("--hidden must be > 0, got {}", c.hidden));
  require_in("attention", c.attention, {"none", "bahdanau", "luong_dot", "luong_general"});
  require_in("score", c.score, {"dot", "additive"});
  require(c.min_len > 0, fmt::format("--min_len must be > 0, got {}", c.min_len));
  require(c.max_len >= c.min_len,
          fmt::format("--max_len ({}) must be >= --min_len ({})", c.max_len, c.min_len));
  require(c.eval_min_len > 0, fmt::format("--eval_min_len must be > 0, got {}", c.eval_min_len));
  require(c.eval_max_len >= c.eval_min_len,
          fmt::format("--eval_max_len ({}) must be >= --eval_min_len ({})", c.eval_max_len,
                      c.eval_min_len));
  require(!c.alphabet.empty(), "--alphabet must not be empty");
  try {  // checked here, before the run folder is claimed, so a bad value writes nothing
    data::utf8_chars(c.alphabet, "--alphabet");
  } catch (const Error& e) {
    throw UsageError(std::string("train: ") + e.what());
  }
  require(c.num_pairs > 0, fmt::format("--num_pairs must be > 0, got {}", c.num_pairs));
  require(c.hops > 0, fmt::format("--hops must be > 0, got {}", c.hops));
  require(c.seq_len > 0, fmt::format("--seq_len must be > 0, got {}", c.seq_len));
  require_in("longrange_mode", c.longrange_mode, {"match", "majority"});
  require(c.block_len > 0, fmt::format("--block_len must be > 0, got {}", c.block_len));
  require(c.steps > 0, fmt::format("--steps must be > 0, got {}", c.steps));
  require(c.batch_size > 0, fmt::format("--batch_size must be > 0, got {}", c.batch_size));
  require(c.lr > 0 && std::isfinite(c.lr), fmt::format("--lr must be > 0, got {}", c.lr));
  require_in("schedule", c.schedule, {"constant", "warmup", "noam", "cosine"});
  require(c.warmup >= 0, fmt::format("--warmup must be >= 0, got {}", c.warmup));
  require(c.schedule != "noam" || c.warmup > 0, "--schedule noam needs --warmup > 0");
  require(c.schedule != "cosine" || c.steps > c.warmup,
          fmt::format("--schedule cosine needs --steps ({}) > --warmup ({})", c.steps, c.warmup));
  require(c.weight_decay >= 0, fmt::format("--weight_decay must be >= 0, got {}", c.weight_decay));
  require(c.clip >= 0, fmt::format("--clip must be >= 0, got {}", c.clip));
  require(c.label_smoothing >= 0 && c.label_smoothing < 1,
          fmt::format("--label_smoothing must be in [0, 1), got {}", c.label_smoothing));
  require(c.eval_size > 0, fmt::format("--eval_size must be > 0, got {}", c.eval_size));
  require(c.eval_every >= 0, fmt::format("--eval_every must be >= 0, got {}", c.eval_every));
  require(c.target >= 0 && c.target <= 1,
          fmt::format("--target must be in [0, 1], got {}", c.target));
  require(c.max_seconds >= 0, fmt::format("--max_seconds must be >= 0, got {}", c.max_seconds));
  require(c.checkpoint_every >= 0,
          fmt::format("--checkpoint_every must be >= 0, got {}", c.checkpoint_every));
  require_in("progress", c.progress, {"auto", "bar", "lines", "off"});
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
