// T5's learned relative position bias: one trained scalar per (distance bucket, head), added to
// the attention scores before the softmax. Nothing is added to the embeddings.
//
//   attn::Generator gen(0);
//   attn::nn::RelativePositionBias rel(/*nhead=*/4, /*bidirectional=*/true, gen);  // encoder
//   attn::Var bias = rel.forward(T, T);              // (1,4,T,T)
//   attn::nn::SdpaOptions o;  o.masks.bias = bias;   // scores + bias, then softmax
//   rel.buckets(T, T);                               // (T,T) bucket ids, for plots and tests
//   attn::nn::t5_relative_bucket(-20, /*bidirectional=*/true, 32, 128);  // 10
//
// Buckets (Hugging Face's _relative_position_bucket). Let r = key position - query position.
//   bidirectional (encoder): half of the buckets for r <= 0, the other half (offset by it) for
//     r > 0; the distance is n = |r|.
//   causal (decoder): only the past counts, n = max(-r, 0); future keys share bucket 0 (the
//     causal mask hides them anyway).
// With b buckets per direction, distances n < b/2 each get their own bucket (exact), and the
// rest are spread log-uniformly: b/2 + floor(log(n / (b/2)) / log(max_distance / (b/2)) * b/2),
// capped at b - 1, so every distance >= max_distance shares the last bucket. Near tokens are
// told apart exactly, far ones only roughly, and any length works (no table runs out).
// The log is taken in double; a value that is mathematically a whole number lands in the upper
// bucket (as exact arithmetic, and PyTorch's float32 version, give for the default sizes).
//
// Parameter: weight (num_buckets, nhead), init N(0, init_std^2) (T5 uses d_model^-0.5). The
// gradient of a bucket's entry is the sum of the score gradients over every (i, j) in it.
#pragma once

#include <cstdint>
#include <memory>

#include "autograd/generator.h"
#include "nn/module.h"

namespace attn::nn {

// The bucket of relative position r = key - query (see above). Throws for sizes that leave no
// exact bucket (fewer than 2 buckets per direction) or max_distance <= the exact range.
int64_t t5_relative_bucket(int64_t relative_position,
                           bool bidirectional,
                           int64_t num_buckets,
                           int64_t max_distance);

class RelativePositionBias : public Module {
 public:
  RelativePositionBias(int64_t nhead,
                       bool bidirectional,
                       Generator& gen,
                       int64_t num_buckets = 32,
                       int64_t max_distance = 128,
                       double init_std = 0.1);

  // -> (1, nhead, tq, tk): bias[0,h,i,j] = weight[bucket(j - (tk - tq + i)), h]. The queries are
  // the last tq of tk positions (tq = 1 is a decoding step with a KV cache).
  Var forward(int64_t tq, int64_t tk) const;
  // (tq, tk) bucket ids as floats, the same query convention.
  Tensor buckets(int64_t tq, int64_t tk) const;

  int64_t nhead() const { return nhead_; }
  bool bidirectional() const { return bidirectional_; }
  int64_t num_buckets() const { return num_buckets_; }
  int64_t max_distance() const { return max_distance_; }

  Var weight;  // (num_buckets, nhead)

 private:
  int64_t nhead_;
  bool bidirectional_;
  int64_t num_buckets_, max_distance_;
};

// The models' T5 table: T5's sizes (32 buckets, max_distance 128) and init std d_model^-0.5;
// bidirectional for an encoder, causal for a decoder.
std::shared_ptr<RelativePositionBias> t5_model_bias(int64_t nhead,
                                                    int64_t d_model,
                                                    bool bidirectional,
                                                    Generator& gen);

}  // namespace attn::nn
