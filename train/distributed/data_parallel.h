// Data-parallel training on top of a Communicator: which part of a batch a rank computes, how
// the ranks' gradients become the global batch's gradient, and how the ranks agree to start.
//
//   Slice s = rank_slice(batch.size(), comm.rank(), comm.size());   // [begin, end)
//   GradientSync sync(comm, params);
//   LossOut l = model.loss(my_examples);  l.loss.backward();         // this rank's mean loss
//   GlobalLoss g = sync.sum(l.loss.item(), l.tokens, "step 12");    // every rank: same grads
//   all_or_none(comm, "start-up", [&] { validate(); });              // an error on one rank
//                                                                    // is raised on all
// Why the gradient is the global batch's: the loss of a batch is the mean over its T scored
// tokens, L = (1/T) sum_t l_t. Rank r computes L_r = (1/T_r) sum over its T_r tokens, so
//   dL = sum_r (T_r / T) dL_r.
// GradientSync weights each rank's gradient by T_r / T (T summed over the ranks first) and sums
// in rank order. Averaging the ranks' gradients with equal weights 1/N would be wrong whenever
// the slices hold different numbers of tokens (sequences of different lengths).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "autograd/generator.h"
#include "autograd/var.h"
#include "nn/module.h"
#include "train/distributed/communicator.h"

namespace attn::train::distributed {

// The examples [begin, end) of n that rank `rank` of `size` computes: contiguous, in order,
// sizes differing by at most one. Every rank draws the whole global batch from the same seeded
// stream and keeps its slice, so the batch is the same sequence of examples for any N.
struct Slice {
  int64_t begin = 0, end = 0;
};
Slice rank_slice(int64_t n, int rank, int size);

struct GlobalLoss {
  double loss = 0;     // the global batch's mean loss, sum_r (T_r / T) L_r
  int64_t tokens = 0;  // T
};

class GradientSync {
 public:
  GradientSync(Communicator& comm, std::vector<Var> params);
  // Call after backward of this rank's mean loss over `tokens` scored tokens. Replaces every
  // parameter's gradient by the global batch's (the same bits on every rank); a parameter no
  // rank's backward reached keeps no gradient, as in a single process.
  GlobalLoss sum(double loss, int64_t tokens, const std::string& what);
  // Seconds spent in the two collectives, summed over calls (for the benchmark).
  double communication_seconds() const { return comm_seconds_; }

 private:
  Communicator& comm_;
  std::vector<Var> params_;
  std::vector<float> flat_;  // every gradient, then one has-gradient flag per parameter, then
                             // the weighted loss: one buffer, one ordered sum
  double comm_seconds_ = 0;
};

// Runs fn on every rank, then compares outcomes: when fn threw attn::Error on any rank, every
// rank throws (attn::UsageError when every failure was one), naming the ranks and their
// messages, and marks the failure as agreed (note_agreed_failure). No rank waits for one that
// gave up.
void all_or_none(Communicator& comm, const std::string& what, const std::function<void()>& fn);

// Refuses (attn::UsageError on every rank) to train when the ranks were started with different
// options: `options` maps option name to value on this rank; the message lists each difference
// from rank 0.
void require_same_options(Communicator& comm, const std::map<std::string, std::string>& options);

// Gives rank r > 0 its own streams for dropout and masking, derived from rank 0's state and r:
// with a shared state every rank would draw the same masks for its slice. Rank 0 keeps its
// stream (what a checkpoint saves), so one rank is exactly the single-process run.
void separate_generators(const std::map<std::string, Generator*>& generators, int rank);

// Checks that every rank holds bit-identical weights (an FNV-1a hash of every parameter
// compared across ranks); throws attn::Error on every rank when they differ.
void require_identical_weights(Communicator& comm, nn::Module& model, const std::string& when);

}  // namespace attn::train::distributed
