#include "experiments/common/s6_probe.h"

#include "experiments/kit/kit.h"
#include "nn/norms.h"
#include "nn/positional/sinusoidal.h"
#include "nn/ssm/selective_ssm.h"

namespace attn::experiments {

namespace {

// The child registered under `name`, or null.
std::shared_ptr<nn::Module> child(const nn::Module& m, const std::string& name) {
  for (const auto& [n, c] : m.children())
    if (n == name) return c;
  return nullptr;
}

// The module at a dotted path ("layers.0.mixer"), cast to M; attn::Error when absent.
template <class M>
std::shared_ptr<M> module_at(const nn::Module& root, const std::string& path) {
  std::shared_ptr<nn::Module> at;
  const nn::Module* node = &root;
  size_t from = 0;
  while (node) {
    const size_t dot = path.find('.', from);
    at = child(*node, path.substr(from, dot == std::string::npos ? dot : dot - from));
    node = at.get();
    if (dot == std::string::npos) break;
    from = dot + 1;
  }
  auto cast = std::dynamic_pointer_cast<M>(at);
  if (!cast) throw Error("first_layer_delta: the model has no suitable module at " + path);
  return cast;
}

}  // namespace

Tensor first_layer_delta(const MixerModel& m, const Tensor& ids) {
  NoGrad off;
  const auto ssm = module_at<nn::SelectiveSSM>(m, "layers.0.mixer");
  Var h = module_at<nn::Embedding>(m, "tok")->forward(ids);
  if (m.options().positions) h = module_at<nn::SinusoidalPositionalEncoding>(m, "pos")->forward(h);
  h = module_at<nn::LayerNorm>(m, "layers.0.mixer_norm")->forward(h);
  const int64_t e = ssm->d_inner();
  const int64_t rank = ssm->x_proj->out_features() - 2 * ssm->options().d_state;
  const Var u = silu(ssm->conv1d->forward(slice(ssm->in_proj->forward(h), 2, 0, e)));
  return softplus(ssm->dt_proj->forward(slice(ssm->x_proj->forward(u), 2, 0, rank))).value();
}

}  // namespace attn::experiments
