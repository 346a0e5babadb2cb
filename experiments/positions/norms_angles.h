// norms-angles' reading of a trained causal LM: every head's q·k split into |q|, |k| and cos θ
// at positions inside and beyond the training length, the attention mass on the first token,
// the last few and the middle, and next-character accuracy by position.
//
//   norms::ProbeSettings s{.train_len = 32, .recent = 4};
//   norms::ModelReading r = norms::read_model(model, windows, s);   // windows: (B, eval_len)
//   r.layers[l].heads[h].q_in;          // |q_i| at every position i < train_len
//   r.layers[l].tv_norm_only;           // attention rebuilt from |k| alone (angle frozen)
//   r.layers[l].sink;                   // mass on key 0, relative to a uniform row
//
// Per head (D = d_model / nhead): q_i and k_j are read from the layer's input exactly as the
// layer computes them (norm1, the in_proj rows, RoPE when the model has it), and their scores
// softmax(q_i · k_j / sqrt(D)) are checked against the weights the layer itself used, so every
// number below is about the computation the model really does.
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/tensor.h"
#include "data/task.h"
#include "nn/transformer/decoder_only.h"

namespace attn::experiments::norms {

// cos θ on [-1, 1] in kCosBins equal bins: a distribution kept as counts.
constexpr int kCosBins = 200;
using CosHistogram = std::vector<double>;  // kCosBins counts

struct ProbeSettings {
  int64_t train_len = 32;  // positions [0, train_len) were seen in training
  int64_t recent = 4;      // the "most recent" keys of a row: j > i - recent
  int64_t rel_bins = 8;    // bins of the relative key position j / (i + 1) for the figure
};

struct HeadReading {
  std::vector<double> q_in, q_out, k_in, k_out;  // |q_i|, |k_j| at positions < / >= train_len
  // cos θ_ij of the rows i < train_len (every trained pair), and of the rows i >= train_len at
  // distances i - j >= train_len (pairs no training window held).
  CosHistogram cos_in, cos_far;
  double entropy_rank_corr = 0;  // Spearman(|q_i|, entropy_i / log(i+1)), rows [L/2, L)
  double cos_row_sd = 0;         // mean within-row sd of cos θ, rows i < train_len
};

struct LayerReading {
  std::vector<HeadReading> heads;
  // Attention rebuilt from one factor, as a total-variation distance to the real row (mean over
  // rows 1 <= i < train_len and heads): norms only = |q_i||k_j| cos-bar_i (the row's mean cosine
  // for every key); angles only = |q_i| |k|-bar_i cos θ_ij (the row's mean key norm).
  double tv_norm_only = 0, tv_angle_only = 0;
  // Rows train_len/2 <= i < train_len, mean over rows and heads, each relative to a uniform row
  // (1 = as much as a uniform row gives): per key on key 0, on the `recent` last keys, and on
  // the keys between them; tv_uniform = the rows' total-variation distance to uniform.
  double sink = 0, recent = 0, middle = 0, tv_uniform = 0;
  std::vector<double> by_relative;  // per bin of j / (i + 1), relative to uniform
  // Rows i >= train_len: the weight on keys at distances i - j >= train_len (never trained).
  double far_mass = 0;
};

struct ModelReading {
  std::vector<LayerReading> layers;
  double accuracy_in = 0, accuracy_out = 0;  // next character, positions < / >= train_len
  double loss_in = 0, loss_out = 0;          // nats
  int64_t scored_in = 0, scored_out = 0;
  std::vector<int64_t> bucket_starts;  // train_len-doubling buckets: 0, L, 2L, 4L, ...
  std::vector<double> accuracy_by_bucket;
};

// One pass over `windows` (each eval_len characters, src and tgt) in eval mode, no gradient.
// The model must use RoPE or no positions (no score bias, no window, pre-norm blocks); throws
// attn::Error when the recomputed weights differ from the layer's own.
ModelReading read_model(nn::DecoderOnlyTransformer& model,
                        const std::vector<data::Example>& windows,
                        const ProbeSettings& settings);

// Kolmogorov-Smirnov distance sup |F_a - F_b| of two samples, and of two histograms on one grid.
double ks_samples(std::vector<double> a, std::vector<double> b);
double ks_histograms(const CosHistogram& a, const CosHistogram& b);

}  // namespace attn::experiments::norms
