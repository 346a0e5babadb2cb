#include "nn/attention/projected_attention.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "nn/attention/sdpa.h"

namespace attn::nn {

ProjectedAttention::ProjectedAttention(
    std::string type_name, int64_t d_model, int64_t nhead, Generator& gen, bool bias)
    : Module(std::move(type_name)), d_model_(d_model), nhead_(nhead) {
  if (d_model <= 0 || nhead <= 0 || d_model % nhead != 0)
    throw Error(fmt::format("{}: d_model ({}) must be a positive multiple of nhead ({})",
                            this->type_name(), d_model, nhead));
  q_proj = register_module("q_proj", std::make_shared<Linear>(d_model, d_model, bias, gen));
  k_proj = register_module("k_proj", std::make_shared<Linear>(d_model, d_model, bias, gen));
  v_proj = register_module("v_proj", std::make_shared<Linear>(d_model, d_model, bias, gen));
  out_proj = register_module("out_proj", std::make_shared<Linear>(d_model, d_model, bias, gen));
}

HeadsQKV ProjectedAttention::project(const Var& x) const {
  if (x.rank() != 3 || x.size(2) != d_model_)
    throw Error(fmt::format("{}: expected x (B,T,{}), got {}", type_name(), d_model_,
                            shape_str(x.shape())));
  return {split_heads(q_proj->forward(x), nhead_), split_heads(k_proj->forward(x), nhead_),
          split_heads(v_proj->forward(x), nhead_)};
}

Var ProjectedAttention::combine(const Var& y) const {
  return out_proj->forward(merge_heads(y));
}

}  // namespace attn::nn
