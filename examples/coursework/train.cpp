// Trains a tiny network with the new layer on a toy task and prints the loss going down.
//
//   ./train
//   step    0  loss 0.4021
//   ...
//
// The task: from x in [-2, 2] predict the clipped ramp clamp(1.5 x, -1, 1). A linear layer
// cannot bend, so the network needs the soft cap's saturation (and learns where to put it).
// Exit code 1 if the final loss is not below a tenth of the first (the layer did not learn).
#include <algorithm>
#include <cstdio>

#include <attnlab/autograd/functional.h>
#include <attnlab/nn/linear.h>
#include <attnlab/train/optim/adam.h>

#include "soft_cap.h"

int main() {
  attn::Generator gen(0);
  attn::nn::Linear in(1, 8, true, gen), out(8, 1, true, gen);
  coursework::SoftCap capped(8, 1.0);
  std::vector<attn::Var> params;
  for (const auto* m : std::vector<const attn::nn::Module*>{&in, &capped, &out})
    for (const attn::Var& p : m->parameters()) params.push_back(p);
  attn::train::Adam opt(params, {.lr = 0.02});

  const int64_t n = 64;
  double first = 0, last = 0;
  for (int step = 0; step <= 600; ++step) {
    attn::Tensor x = attn::Tensor::rand({n, 1}, gen, -2.0, 2.0), target({n, 1});
    for (int64_t i = 0; i < n; ++i) target[i] = std::clamp<attn::real>(1.5f * x[i], -1, 1);
    opt.zero_grad();
    attn::Var loss = attn::mse_loss(out.forward(capped.forward(in.forward(attn::Var::constant(x)))),
                                    attn::Var::constant(target));
    loss.backward();
    opt.step();
    last = loss.item();
    if (step == 0) first = last;
    if (step % 100 == 0) std::printf("step %4d  loss %.4f\n", step, last);
  }
  std::printf("caps after training:");
  for (int64_t j = 0; j < capped.cap.numel(); ++j) std::printf(" %.2f", capped.cap.value()[j]);
  std::printf("\n");
  if (!(last < first / 10)) {
    std::printf("FAILED: the loss fell from %.4f to only %.4f\n", first, last);
    return 1;
  }
  std::printf("ok: the loss fell from %.4f to %.4f\n", first, last);
  return 0;
}
