#include "experiments/common/layer_gradients.h"

#include "data/stream.h"
#include "experiments/kit/kit.h"
#include "train/run/task_model.h"
#include "train/run/task_setup.h"

namespace attn::experiments {

std::vector<double> layer_gradient_norms(const nn::Module& model,
                                         const std::string& prefix,
                                         int64_t layers) {
  std::vector<double> sums(static_cast<size_t>(layers), 0.0);
  std::vector<bool> seen(static_cast<size_t>(layers), false);
  for (const auto& [name, p] : model.named_parameters())
    for (int64_t i = 0; i < layers; ++i) {
      if (name.rfind(fmt::format("{}{}.", prefix, i), 0) != 0) continue;
      seen[static_cast<size_t>(i)] = true;
      if (!p.has_grad()) continue;  // a parameter the loss does not reach: gradient 0
      const Tensor& g = p.grad();
      for (int64_t k = 0; k < g.numel(); ++k)
        sums[static_cast<size_t>(i)] += static_cast<double>(g[k]) * static_cast<double>(g[k]);
    }
  for (int64_t i = 0; i < layers; ++i)
    if (!seen[static_cast<size_t>(i)])
      throw Error(fmt::format("layer_gradient_norms: no parameter is named {}{}.*", prefix, i));
  std::vector<double> norms;
  for (double s : sums) norms.push_back(std::sqrt(s));
  return norms;
}

std::vector<double> init_layer_gradient_norms(const train::TrainConfig& tc,
                                              const std::string& prefix,
                                              int64_t layers) {
  train::validate_train_config(tc);
  const train::TaskSetup setup = train::make_task_setup(tc);
  // As train_task builds them: the same init generator, limits and training stream.
  Generator init(train::init_seed(tc));
  const train::SequenceLimits limits{
      std::max(setup.train->max_src_len(), setup.heldout->max_src_len()),
      std::max(setup.train->max_tgt_len(), setup.heldout->max_tgt_len())};
  const auto model = train::make_task_model(tc, *setup.train, limits, init);
  data::ExampleStream stream(setup.train, train::stream_seed(tc));
  const train::LossOut l = model->loss(stream.next(tc.batch_size));
  l.loss.backward();
  return layer_gradient_norms(model->module(), prefix, layers);
}

}  // namespace attn::experiments
