// qkv-identity's trained part (004 §2.1): one attention layer trained with a shared query/key
// matrix (W_K = W_Q) beside one with two matrices, on a task that needs a one-way pattern.
//
//   TiedStudy s = tied_qk_study(cfg, ctx);   // trains both, records results, draws the figure
//   tied_qk_rows(s, cmp);                    // the comparison rows
//
// With W_K = W_Q = W the scores are S = X W W^T X^T: symmetric, and W W^T is positive
// semi-definite, so S_ij <= sqrt(S_ii S_jj) (Cauchy-Schwarz). The task: the output at position
// i is the token at position i-1 (cyclically), with no mask. An untied layer can score "the key
// one position back" highest for every query; a tied one cannot do it at every position of a
// sequence: if S_i,i-1 > S_ii held for every i around the cycle, multiplying the inequalities
// would give prod S_ii < prod S_i,i-1 <= prod sqrt(S_ii S_i-1,i-1) = prod S_ii.
#pragma once

#include <cstdint>

#include "experiments/config.h"
#include "experiments/report/compare.h"

namespace attn::experiments {

class RunContext;

struct TiedVariantResult {
  double accuracy = 0;               // held-out argmax accuracy of the previous-token task
  double previous_mass = 0;          // mean attention weight from position i to position i-1
  double self_mass = 0;              // mean attention weight from i to itself
  double asymmetry = 0;              // max |S - S^T| / max |S| over the held-out scores
  int64_t most_led_by_previous = 0;  // max over sequences of #{i : S_i,i-1 > S_ii}
};

struct TiedStudy {
  TiedVariantResult untied, tied;
  int64_t heldout_tokens = 0;  // the accuracy's sample size
  int64_t seq_len = 0;
};

// The fields the study reads: tied_steps, tied_seq_len, tied_vocab, tied_width.
void add_tied_fields(Config& config);
TiedStudy tied_qk_study(const Config& cfg, RunContext& ctx);
void tied_qk_rows(const TiedStudy& s, DocumentComparison& cmp);

}  // namespace attn::experiments
