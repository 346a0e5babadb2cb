// attention-zoo's length test for dual chunk attention: a character language model with RoPE
// attention (no other positions) trained on windows of train_len characters of the toy grammar,
// then read at longer lengths twice with the SAME weights — plain RoPE indices (distances up to
// T - 1, most never seen in training) and DCA indices (every distance below train_len).
//
//   DcaExtrapolation r = dca_part(cfg, ctx);   // attention-zoo's part 3: trains, reports
//   r.plain_accuracy[1], r.dca_accuracy[1];   // next-character accuracy at rope_eval_lengths[1]
//
// The settings are attention-zoo's: d_model, nhead, num_layers, lr, rope_train_len, rope_steps,
// rope_eval_lengths; the model trains with Adam at a constant rate, batches of 16 windows of a
// 1500-sentence toy grammar, and is scored on up to 8192 validation characters per length.
#pragma once

#include <cstdint>
#include <vector>

#include "experiments/config.h"

namespace attn::experiments {

class RunContext;

struct DcaExtrapolation {
  std::vector<double> plain_accuracy, dca_accuracy;  // per eval length, next-character
  std::vector<double> plain_loss, dca_loss;
  double max_dca_distance = 0;  // the largest query-key distance DCA used at the longest length
  double train_seconds = 0;
};

// The section, table, results (rope_*, dca_max_distance) and figure of the length test.
DcaExtrapolation dca_part(const Config& cfg, RunContext& ctx);

}  // namespace attn::experiments
