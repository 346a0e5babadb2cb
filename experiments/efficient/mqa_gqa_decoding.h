// mqa-gqa's decoding parts, run on the trained variants (MHA, GQA, MQA): the KV cache's bytes
// per token read off the cache tensors, cached against recomputed greedy decoding (the same
// tokens and logits), and the time of one token after a prefix of P with and without the cache.
// Each part prints its table and note and stores what it measured in the variants.
//
//   cache_part(variants, prompts, ctx);              // v.cache: bytes per token, closed form
//   agreement_part(variants, prompts, 32, ctx);      // v.agreement: tokens that differ
//   DecodeGrowth g = decode_time_part(variants, cfg, corpus.val_ids(), ctx);  // v.cached_ms
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "experiments/config.h"
#include "nn/transformer/decoder_only.h"

namespace attn::experiments {

class RunContext;

struct CacheBytes {
  int64_t per_token = 0, closed_form = 0, at_prompt = 0;
  bool shapes_ok = true;  // every layer's k and v are (B, n_kv_heads, T, D)
};

struct Agreement {
  int64_t tokens = 0, mismatched = 0;
  double max_logit_diff = 0, max_abs_logit = 0;
};

// One attention variant: its key/value head count, the model trained with it, what it measured.
struct Variant {
  std::string name;  // "MHA (8 kv heads)"
  std::string key;   // the prefix of its results: mha, gqa, mqa
  int64_t kv_heads = 0;
  std::shared_ptr<nn::DecoderOnlyTransformer> model;
  std::vector<double> losses;  // training loss per step
  double heldout_loss = 0, heldout_accuracy = 0, train_seconds = 0;
  int64_t parameters = 0;
  CacheBytes cache;
  Agreement agreement;
  std::vector<double> cached_ms, recompute_ms;  // decode time per prefix of --prefixes
};

// Prompts (B,T0) from held-out text and the character after each (B,1).
struct Prompts {
  Tensor prompts, next;
  int64_t count = 0, length = 0;
};

// MHA's (the first variant's) cache bytes per token over variant i's: how much it shrinks.
double cache_ratio(const std::vector<Variant>& vs, size_t i);

void cache_part(std::vector<Variant>& vs, const Prompts& p, RunContext& ctx);
void agreement_part(std::vector<Variant>& vs, const Prompts& p, int64_t tokens, RunContext& ctx);

// How MHA's decode time grows with the prefix P (log-log slopes), its counted multiply-adds.
struct DecodeGrowth {
  double cached_slope = 0, recompute_slope = 0, macs_growth = 0, load = 0;
};

// Times every variant at --prefixes (--reps, --budget_s, --timing_threads) on held-out `ids`.
DecodeGrowth decode_time_part(std::vector<Variant>& vs,
                              const Config& cfg,
                              const std::vector<int64_t>& ids,
                              RunContext& ctx);

}  // namespace attn::experiments
