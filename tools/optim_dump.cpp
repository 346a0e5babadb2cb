// Runs each optimizer configuration for 5 steps from fixed weights and gradients and writes
// everything to <dir>/optim_<name>.safetensors, for tests/parity/check_optim.py to replay the
// same steps with torch.optim and compare.
//
//   attn_optim_dump /tmp/parity/optim && /usr/bin/python3 tests/parity/check_optim.py BUILD DUMP
//
// Stored per file: init.<i> (weights), grad.<s>.<i> (the gradient given at step s; absent
// means "no gradient this step", which PyTorch expresses as p.grad = None), after.<s>.<i>
// (our weights after step s). Metadata: the PyTorch constructor, the per-step learning rates,
// and the clip norm (0 = no clipping), plus our clip_grad_norm results as clipnorm.<s>.
#include <fmt/format.h>

#include <filesystem>
#include <functional>
#include <memory>

#include "autograd/error.h"
#include "autograd/safetensors.h"
#include "train/optim/adam.h"
#include "train/optim/clip.h"
#include "train/optim/sgd.h"

namespace {

using namespace attn;
using namespace attn::train;

struct Config {
  std::string name;
  std::string torch;  // constructor, with `params` the parameter list
  std::function<std::unique_ptr<Optimizer>(std::vector<Var>)> make;
  std::vector<double> lrs;  // one per step
  double clip = 0;
};

constexpr int kSteps = 5;

void run(const Config& c, const std::filesystem::path& dir) {
  Generator gen(20240607);
  const std::vector<Shape> shapes{{4, 3}, {5}, {2, 3, 2}};
  std::vector<Var> params;
  TensorMap out;
  for (size_t i = 0; i < shapes.size(); ++i) {
    params.push_back(Var::parameter(Tensor::randn(shapes[i], gen)));
    out[fmt::format("init.{}", i)] = params.back().value().clone();
  }
  auto opt = c.make(params);
  Metadata meta{{"torch", c.torch}, {"clip", fmt::format("{}", c.clip)}};
  std::string lrs;
  for (int s = 0; s < kSteps; ++s) {
    opt->zero_grad();
    for (size_t i = 0; i < params.size(); ++i) {
      if (s == 2 && i == 1) continue;  // no gradient reaches parameter 1 at step 2
      Tensor g = Tensor::randn(shapes[i], gen, s % 2 == 0 ? 2.0 : 0.3);
      out[fmt::format("grad.{}.{}", s, i)] = g.clone();
      params[i].node().accumulate_grad(g);
    }
    if (c.clip > 0)
      meta[fmt::format("clipnorm.{}", s)] = fmt::format("{:.9g}", clip_grad_norm(params, c.clip));
    opt->set_lr(c.lrs[static_cast<size_t>(s)]);
    lrs += fmt::format("{}{:.17g}", s ? "," : "", c.lrs[static_cast<size_t>(s)]);
    opt->step();
    for (size_t i = 0; i < params.size(); ++i)
      out[fmt::format("after.{}.{}", s, i)] = params[i].value().clone();
  }
  meta["lrs"] = lrs;
  save_safetensors((dir / ("optim_" + c.name + ".safetensors")).string(), out, meta);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: attn_optim_dump OUT_DIR\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  const std::vector<double> flat(kSteps, 0.05), varying{0.05, 0.04, 0.08, 0.01, 0.03};
  const std::vector<Config> configs{
      {"sgd", "torch.optim.SGD(params, lr=0.05)",
       [](std::vector<Var> p) { return std::make_unique<Sgd>(p, Sgd::Options{.lr = 0.05}); }, flat},
      {"sgd_momentum_wd",
       "torch.optim.SGD(params, lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01)",
       [](std::vector<Var> p) {
         return std::make_unique<Sgd>(
             p, Sgd::Options{.lr = 0.05, .momentum = 0.9, .dampening = 0.1, .weight_decay = 0.01});
       },
       varying},
      {"sgd_nesterov",
       "torch.optim.SGD(params, lr=0.05, momentum=0.8, weight_decay=0.05, nesterov=True)",
       [](std::vector<Var> p) {
         return std::make_unique<Sgd>(
             p, Sgd::Options{.lr = 0.05, .momentum = 0.8, .weight_decay = 0.05, .nesterov = true});
       },
       flat, 1.5},
      {"adam", "torch.optim.Adam(params, lr=0.05)",
       [](std::vector<Var> p) { return std::make_unique<Adam>(p, AdamOptions{.lr = 0.05}); }, flat},
      {"adam_wd",
       "torch.optim.Adam(params, lr=0.05, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)",
       [](std::vector<Var> p) {
         return std::make_unique<Adam>(
             p, AdamOptions{
                    .lr = 0.05, .beta1 = 0.8, .beta2 = 0.99, .eps = 1e-6, .weight_decay = 0.1});
       },
       varying, 2.0},
      {"adamw", "torch.optim.AdamW(params, lr=0.05)",
       [](std::vector<Var> p) { return std::make_unique<AdamW>(p); }, varying},
      {"adamw_wd",
       "torch.optim.AdamW(params, lr=0.05, betas=(0.95, 0.98), eps=1e-9, weight_decay=0.3)",
       [](std::vector<Var> p) {
         return std::make_unique<AdamW>(
             p, AdamOptions{
                    .lr = 0.05, .beta1 = 0.95, .beta2 = 0.98, .eps = 1e-9, .weight_decay = 0.3});
       },
       flat, 1.0},
  };
  try {
    for (const auto& c : configs) run(c, dir);
  } catch (const attn::Error& e) {
    fmt::print(stderr, "attn_optim_dump: {}\n", e.what());
    return 1;
  }
  fmt::print("attn_optim_dump: wrote {} optimizer runs to {}\n", configs.size(), dir.string());
  return 0;
}
