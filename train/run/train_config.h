// TrainConfig: everything `attnlab train <task> --model <kind> [--key value ...]` can set, with
// validation that happens before any work starts.
//
//   attn::train::TrainConfig cfg;                       // reversal + transformer defaults
//   attn::train::set_train_option(cfg, "task", "reversal");
//   attn::train::set_train_option(cfg, "d-model", "64");  // '-' and '_' are the same
//   attn::train::validate_train_config(cfg);            // attn::UsageError naming the field
//   attn::train::train_options_help();                  // the table `--help` prints
//
// The fields are declared once, in train_options(), with the options system
// (train/options/: typed fields, the shared model/optimizer/data/evaluation/seed groups, one
// number parser, one suggestion engine); the functions below only translate between those fields
// and the TrainConfig struct the models and the loop read. Unknown keys and bad values throw
// attn::UsageError (exit code 2 in the CLI) naming the key and, for a misspelling, the closest
// valid one. The defaults are small on purpose: reversal with the transformer reaches >= 99%
// exact match on held-out lengths 8-16 in about a minute on two cores.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "train/options/config.h"

namespace attn::train {

struct TrainConfig {
  // what
  std::string task = "reversal";      // reversal copy sort recall khop anagram longrange charlm
  std::string model = "transformer";  // transformer gpt bert lstm gru rnn mixer
  // --model mixer: a row of nn::mixer_registry() (built-ins, the zoo, --plugin rows)
  std::string mixer = "softmax";
  uint64_t seed = 1;
  // model size (transformer family)
  int64_t d_model = 64;
  int64_t nhead = 4;
  int64_t n_kv_heads = 0;  // key/value heads: 0 = nhead (MHA), 1 = MQA, else GQA (divides nhead)
  int64_t num_layers = 2;  // per stack (encoder and decoder each for the transformer)
  int64_t dim_ff = 256;
  double dropout = 0.0;
  bool norm_first = true;  // pre-norm: trains without a long warm-up
  // Ablations of the transformer block (nn/transformer/layer_options.h); all on by default.
  bool layer_norm = true;   // the layers' norms and the stacks' final norms
  bool residual = true;     // the residual connection around every sublayer
  bool feedforward = true;  // the feed-forward sublayer of every layer
  // --model gpt: a row of nn::feed_forward_registry() (a --plugin's block) as every layer's
  // feed-forward block; "" for the built-in GELU block.
  std::string ffn_block;
  bool src_eos = false;  // seq2seq: end each source with EOS
  // none learned sinusoidal rope alibi t5_bias, or auto: the model's own (resolved_positional)
  std::string positional = "auto";
  std::string score = "dot";  // transformers: dot (q.k/sqrt(d)) or additive (w^T tanh(q + k))
  // recurrent models
  int64_t hidden = 128;
  std::string attention = "bahdanau";  // none bahdanau luong_dot luong_general
  // task
  int64_t min_len = 1;
  int64_t max_len = 16;
  int64_t eval_min_len = 8;  // held-out lengths
  int64_t eval_max_len = 16;
  std::string alphabet = "abcdefghijklmnopqrstuvwxyz";
  int64_t num_pairs = 8;                 // recall; k-hop: nodes
  int64_t hops = 2;                      // k-hop
  int64_t seq_len = 256;                 // longrange
  std::string longrange_mode = "match";  // longrange: match (distant pair) or majority
  std::string text_file;   // charlm: a UTF-8 file (empty: the built-in toy-grammar corpus)
  int64_t block_len = 64;  // charlm window
  // optimisation
  int64_t steps = 1000;
  int64_t batch_size = 64;
  double lr = 3e-3;
  std::string schedule = "cosine";  // constant warmup noam cosine
  int64_t warmup = 100;
  double weight_decay = 0.0;
  double clip = 1.0;  // global gradient norm (0: off)
  double label_smoothing = 0.0;
  // evaluation and stopping
  int64_t eval_size = 500;
  int64_t eval_every = 100;
  double target = 0.99;  // stop when the task's main metric reaches this (0: never)
  double max_seconds = 0;
  // files
  std::string out;     // run folder (default runs/train-<task>-<model>-<time>)
  std::string save;    // checkpoint path (default <out>/checkpoint.safetensors)
  std::string resume;  // continue from this checkpoint
  int64_t checkpoint_every = 500;
  std::string progress = "auto";  // auto bar lines off
};

// Every field of TrainConfig as a typed field whose default is the member of `defaults`.
options::Config train_options(const TrainConfig& defaults = {});
// The fields' values as a TrainConfig.
TrainConfig read_train_config(const options::Config& config);

// Sets one field from text. Throws attn::UsageError for an unknown key (suggesting the closest)
// or a value that does not parse.
void set_train_option(TrainConfig& config, const std::string& key, const std::string& value);
// The current value of a field as text (for the run's config.json and --help).
std::string get_train_option(const TrainConfig& config, const std::string& key);
std::vector<std::string> train_option_names();
// What `attnlab train --help` lists: one line per option (type, meaning, default; "now ..." for
// a value of `now` that differs), under the group headings.
std::string train_options_help(const TrainConfig& now = {});

// Throws attn::UsageError naming the field: unknown task or model, a model that cannot do the
// task, lengths <= 0, max < min, nhead not dividing d_model, non-positive sizes or steps, an
// unknown schedule, a missing text file, or an estimated memory need above the machine's RAM.
void validate_train_config(const TrainConfig& config);

// A rough upper bound of the bytes a run needs: parameters, gradients, Adam's two moments, and
// the activations the tape keeps for one batch (including B*h*T^2 attention weights per layer).
int64_t estimate_train_memory(const TrainConfig& config);
// Bytes of RAM the machine has available now (MemAvailable), or total RAM if unknown.
int64_t available_memory_bytes();

// The positional scheme a transformer run uses: cfg.positional unless it is "auto", which means
// what the model always had: sinusoidal for the encoder-decoder transformer, learned for gpt,
// bert and the encoder classifier (--model transformer on anagram and longrange); "none" for the
// recurrent models (their order comes from the recurrence). attnlab train stores the resolved
// name in config.json and in the checkpoint.
std::string resolved_positional(const TrainConfig& config);
// Throws attn::UsageError unless cfg.mixer names a causal row of nn::mixer_registry() (the
// mixer model is a causal language model over BOS x SEP y).
void validate_mixer_choice(const TrainConfig& config);
// True for transformer, gpt, bert.
bool is_transformer_model(const std::string& model);

// The task list and model list, for help texts.
const std::vector<std::string>& train_task_names();
const std::vector<std::string>& train_model_names();

}  // namespace attn::train
