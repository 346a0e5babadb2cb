// Greedy decoding and beam search over a "next-token log-probabilities" callback, so one
// implementation serves encoder-decoder models (the callback runs the decoder against a fixed
// encoder memory) and decoder-only models (the callback runs the model on prompt + prefix).
//
//   attn::train::NextLogProbs next = [&](const std::vector<std::vector<int64_t>>& prefixes) {
//     // prefixes: N sequences of equal length, each starting with BOS -> (N, V) log-probs
//     return log_softmax(model.decode(memory, prefixes)).value();   // last position only
//   };
//   auto best = attn::train::greedy_decode(next, {kBos}, kEos, /*max_new_tokens=*/20);
//   auto beams = attn::train::beam_search(next, {kBos}, kEos, {.beam_width = 4});
//   beams[0].tokens;   // the best hypothesis (without the prefix and without EOS)
//
// All prefixes in one callback have the same length, so a model needs no padding for them.
//
// Length penalty: a finished hypothesis y (its generated tokens, EOS included, |y| of them) is
// ranked by score = log P(y) / lp(|y|), with
//   kGnmt:  lp(n) = ((5 + n) / 6)^alpha      (Wu et al. 2016, the GNMT paper; the default)
//   kPower: lp(n) = n^alpha                  (plain length normalisation; alpha = 1 is the
//                                             mean log-probability per token)
// alpha = 0 ranks by raw log-probability (which favours short outputs).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "autograd/tensor.h"

namespace attn::train {

using NextLogProbs = std::function<Tensor(const std::vector<std::vector<int64_t>>& prefixes)>;

// Greedy decoding of several prompts at once: at each step every unfinished row takes its
// most likely token; a row stops at EOS (finished rows keep being fed EOS so all prefixes stay
// equal in length). Returns the generated tokens of each row, without the prompt and EOS.
std::vector<std::vector<int64_t>> greedy_decode_batch(const NextLogProbs& next,
                                                      std::vector<std::vector<int64_t>> prompts,
                                                      int64_t eos,
                                                      int64_t max_new_tokens);
std::vector<int64_t> greedy_decode(const NextLogProbs& next,
                                   const std::vector<int64_t>& prompt,
                                   int64_t eos,
                                   int64_t max_new_tokens);

enum class LengthPenalty { kGnmt, kPower };

struct BeamOptions {
  int64_t beam_width = 4;
  int64_t max_new_tokens = 32;
  double alpha = 0.6;
  LengthPenalty penalty = LengthPenalty::kGnmt;
  int64_t num_return = 1;  // how many hypotheses to return (<= beam_width)
};

struct Hypothesis {
  std::vector<int64_t> tokens;  // generated tokens, without the prompt and without EOS
  double log_prob = 0;          // log P of the tokens (and of EOS when finished)
  double score = 0;             // log_prob / lp(length)
  bool finished = false;        // ended with EOS (false: stopped at max_new_tokens)
};

double length_penalty(int64_t length, double alpha, LengthPenalty kind);

// Returns up to num_return hypotheses, best score first. Stops when beam_width hypotheses
// have finished and no live beam can still beat the worst of them (its log-probability can
// only fall, and its penalty is at most lp(max_new_tokens)), or at max_new_tokens.
std::vector<Hypothesis> beam_search(const NextLogProbs& next,
                                    const std::vector<int64_t>& prompt,
                                    int64_t eos,
                                    const BeamOptions& options = {});

}  // namespace attn::train
