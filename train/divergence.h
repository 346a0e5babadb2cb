// The divergence check every training loop makes after each step (train::Trainer's, and a loop
// written out by hand such as the demo's): a NaN or infinite loss, or an exploding one, throws a
// train::TrainingDiverged (train/trainer.h, exit 1 from the CLI) naming the step, the loss and
// what to do about it.
//
//   attn::train::DivergenceCheck diverged("mlp");   // the variant, for the message; factor 1000
//   for (int64_t step = 1; step <= steps; ++step) {
//     ... loss.backward(); update ...
//     diverged.check(step, loss.item());             // throws once the run has blown up
//   }
#pragma once

#include <cstdint>
#include <string>

namespace attn::train {

// Tells an exploding loss from a healthy one without knowing the model or the loss.
//
// Reference: the run's first loss, computed before any update. For cross-entropy over V
// classes it is about ln V (a freshly initialised model guesses nearly uniformly; 3.3 for 26
// letters), and training only lowers it: healthy runs stay within a few times of it even in
// their noisiest early steps. A per-token loss 1000x above it means the model gives the right
// answer a probability like e^-3000, i.e. logits thousands apart, which only happens when the
// updates are blowing up the weights (a learning rate far too high, no clipping). So the
// threshold has three orders of magnitude of margin on one side and is still 10-11 orders
// below what a blown-up run shows (`--lr 1e6 --clip 0` reaches 1e14) on the other.
//
// The reference is at least 1 nat: a resumed run that is nearly perfect (first loss 0.001)
// must not stop because one batch costs a few nats. The loss is smoothed by an exponential
// moving average (weight 0.1, about 10 steps), so one outlier batch must itself be 10x over
// the threshold to stop the run.
class DivergenceCheck {
 public:
  // variant: named first in the message ("variant 'mlp': ..."; empty: not named).
  // factor: the exploding-loss limit, x max(first loss, 1); 0: only non-finite losses stop.
  explicit DivergenceCheck(std::string variant = "", double factor = 1000);
  // Throws TrainingDiverged when the loss of `step` is not finite or the moving average has
  // passed the limit.
  void check(int64_t step, double loss);

 private:
  std::string variant_;
  double factor_;
  double first_ = -1;  // the run's first loss (-1: none yet)
  double smoothed_ = 0;
};

}  // namespace attn::train
