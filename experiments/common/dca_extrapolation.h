// attention-zoo's length test for dual chunk attention: a character language model with RoPE
// attention (no other positions) trained on windows of train_len characters of the toy grammar,
// then read at longer lengths twice with the SAME weights — plain RoPE indices (distances up to
// T - 1, most never seen in training) and DCA indices (every distance below train_len).
//
//   DcaExtrapolation r = run_dca_extrapolation({.train_len = 32, .eval_lengths = {32, 128}}, 7);
//   r.plain_accuracy[1], r.dca_accuracy[1];   // next-character accuracy at T = 128
#pragma once

#include <cstdint>
#include <vector>

namespace attn::experiments {

struct DcaExtrapolationOptions {
  int64_t d_model = 32, nhead = 2, layers = 2;
  int64_t train_len = 32, steps = 300, batch = 16;
  double lr = 3e-3;
  int64_t sentences = 1500;   // toy-grammar corpus size
  int64_t eval_chars = 8192;  // validation characters scored per length (at least one window)
  std::vector<int64_t> eval_lengths = {32, 128, 256};
};

struct DcaExtrapolation {
  std::vector<double> plain_accuracy, dca_accuracy;  // per eval length, next-character
  std::vector<double> plain_loss, dca_loss;
  double max_dca_distance = 0;  // the largest query-key distance DCA used at the longest length
  double train_seconds = 0;
};

DcaExtrapolation run_dca_extrapolation(const DcaExtrapolationOptions& o, uint64_t seed);

}  // namespace attn::experiments
