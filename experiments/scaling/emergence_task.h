// The toy task of emergence (003 "Scaling laws and emergent abilities"): multi-digit addition
// written least-significant digit first, for a small GPT, scored two ways: the whole answer
// right (exact match) and per answer token (log-likelihood and accuracy).
//
//   Generator gen(1);
//   AdditionTask task(4);                                  // 4-digit operands, 5-digit sums
//   AdditionSet held = task.draw(1000, gen);               // fresh problems
//   task.hold_out(held);                                   // training never draws them again
//   AdditionSet batch = task.draw(64, gen);                // ids (64,14), targets (64,14)
//   Var loss = cross_entropy(gpt.forward(batch.ids), batch.targets, kIgnoreIndex);
//   AdditionScore s = score_additions(gpt, held);          // exact match, per-token metrics
//
// A problem a + b with d-digit operands is written as d + 1 triplets, least significant digit
// first, each operand digit pair followed by the sum digit it makes:
//   a_0 b_0 s_0  a_1 b_1 s_1  ..  a_d b_d s_d          (a_d = b_d = 0: s_d is the last carry)
// so every sum digit sits a fixed distance after the digits it depends on (a_i, b_i, and the
// carry, readable from the triplet before: it is 1 exactly when s_{i-1} < a_{i-1} + b_{i-1}).
// The model reads the sequence shifted by one (teacher forcing) and is trained and scored only
// on the d + 1 sum digits. A greedy decoder that is handed the operand digits writes the right
// sum exactly when every sum digit is the argmax given the right digits before it, so exact
// match comes from the teacher-forced logits of one forward pass, with no generation loop.
#pragma once

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "autograd/generator.h"
#include "autograd/tensor.h"
#include "nn/transformer/decoder_only.h"

namespace attn::experiments {

constexpr int64_t kAdditionVocabulary = 10;  // the digits

struct AdditionSet {
  Tensor ids;      // (n, 3d + 2) the triplets but the last sum digit
  Tensor targets;  // (n, 3d + 2) the next sum digit after each b_i, kIgnoreIndex elsewhere
  std::vector<std::pair<int64_t, int64_t>> operands;  // (a, b) per row
};

class AdditionTask {
 public:
  explicit AdditionTask(int64_t digits);
  int64_t digits() const { return digits_; }
  int64_t answer_length() const { return digits_ + 1; }
  int64_t input_length() const { return 3 * digits_ + 2; }
  // n problems with operands uniform in [0, 10^d), none of them held out.
  AdditionSet draw(int64_t n, Generator& gen) const;
  // Marks the problems of `s` (a + b and b + a) so that draw never returns them.
  void hold_out(const AdditionSet& s);

 private:
  int64_t digits_, limit_;  // limit_ = 10^digits
  std::set<std::pair<int64_t, int64_t>> held_;
};

struct AdditionScore {
  double exact_match = 0;     // share of problems whose every answer digit is the argmax
  double token_accuracy = 0;  // share of answer digits that are the argmax
  double token_nll = 0;       // mean -log p(right digit) over answer digits (nats)
  std::vector<double> position_accuracy;  // per answer position, least significant first
};

// Scores model on s under NoGrad (teacher forcing, one forward pass).
AdditionScore score_additions(nn::DecoderOnlyTransformer& model, const AdditionSet& s);

}  // namespace attn::experiments
