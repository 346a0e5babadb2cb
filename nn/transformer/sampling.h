// Picking the next token from a row of logits: greedy, temperature, top-k.
//
//   attn::nn::SamplingOptions s;                 // temperature 0: greedy (argmax)
//   s.temperature = 0.8; s.top_k = 20;           // sample from the 20 most likely, sharpened
//   int64_t id = attn::nn::pick_token(logits_row, vocab, s, gen);
//
// Temperature divides the logits before the softmax: < 1 sharpens the distribution, > 1 flattens
// it, -> 0 approaches the argmax (which temperature = 0 is, exactly). top_k keeps only the k
// largest logits (ties at the k-th value are all kept) and renormalises over them.
#pragma once

#include <cstdint>

#include "autograd/generator.h"
#include "autograd/tensor.h"

namespace attn::nn {

struct SamplingOptions {
  double temperature = 0.0;  // 0 = greedy
  int64_t top_k = 0;         // 0 = the whole vocabulary
};

// logits: `vocab` values. gen is used only when sampling (temperature > 0).
int64_t pick_token(const real* logits,
                   int64_t vocab,
                   const SamplingOptions& options,
                   Generator& gen);

// Index of the largest value (the first one on ties).
int64_t argmax(const real* values, int64_t n);

}  // namespace attn::nn
