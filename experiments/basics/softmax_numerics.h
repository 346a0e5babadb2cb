// The float32 measurements of softmax-variants: log-softmax against log(softmax) as the logits
// grow, and what a mask fill value leaves on the masked positions.
//
//   LogSoftmaxSweep s = log_softmax_sweep({.classes = 32, .max_scale = 1e4, .per_octave = 16});
//   s.forms[1].first_bad_value;      // the smallest scale where log(softmax(x)) is not finite
//   std::vector<MaskFill> t = mask_fill_table(16, 4, {1, 1e3, 1e9});
//   t[1].centred[2];                 // weight on one masked position, fill -1e9, scale 1e9
//
// Every number comes from the project's ops (softmax, log_softmax, log, exp, masked_fill) on
// the tape in float32, against a double-precision reference computed here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attn::experiments {

// Logits x_j = s (2j / (n - 1) - 1), j = 0..n-1: a row spread evenly over [-s, s] (the spread
// max - min is 2s), for s = 2^(k / per_octave), k = 0, 1, ... while s <= max_scale.
struct LogSoftmaxSweepSettings {
  int64_t classes = 32;
  double max_scale = 1e4;
  int per_octave = 16;
};

// One way of computing log-probabilities, over the sweep. Errors are max |float32 - double| over
// the row where every entry is finite (NaN where some entry is not). The gradient is that of
// sum_j y_j, a loss touching every class (as label smoothing does): d/dx_j = 1 - n p_j.
struct LogSoftmaxForm {
  std::string name, key;                        // key: the stem of its results.json names
  std::vector<double> value_error, grad_error;  // one per scale
  double first_bad_value = 0;       // smallest scale with a non-finite value; 0: none in the sweep
  double first_bad_grad = 0;        // the same for the gradient
  double largest_finite_error = 0;  // max value_error over the scales where it is finite
};

struct LogSoftmaxSweep {
  std::vector<double> scales;
  std::vector<LogSoftmaxForm> forms;  // direct log_softmax, log(softmax), log(exp / sum exp)
};

LogSoftmaxSweep log_softmax_sweep(const LogSoftmaxSweepSettings& s);

// One mask fill value over the logit scales. A row of n scores, the last `masked` of them
// masked (masked_fill, then softmax). "centred": the unmasked scores spread over [-s, s];
// "negative": over [-s, -s/2], a row where every visible key scores low.
struct MaskFill {
  std::string name, key;  // key: the stem of its results.json names
  double value = 0;
  std::vector<double> centred, negative;  // weight on one masked position, per scale
  double fully_masked = 0;                // the weight of each position when all are masked
  double first_leak_negative = 0;         // smallest scale with a nonzero weight; 0: none
  bool leaks_centred = false;             // a nonzero weight at some scale, centred scores
};

std::vector<MaskFill> mask_fill_table(int64_t n, int64_t masked, const std::vector<double>& scales);

}  // namespace attn::experiments
