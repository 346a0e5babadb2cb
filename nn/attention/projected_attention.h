// The shell shared by the attention variants (linear, blockwise, sliding-window): four linear
// projections around a kernel that mixes positions head by head.
//
//   class MyAttention : public attn::nn::ProjectedAttention {
//    public:
//     MyAttention(int64_t d, int64_t h, Generator& gen) : ProjectedAttention("MyAttention", d, h,
//     gen) {} Var forward(const Var& x) {
//       HeadsQKV a = project(x);                     // q, k, v (B,H,T,Dh)
//       return combine(my_kernel(a.q, a.k, a.v));    // (B,H,T,Dh) -> (B,T,d_model)
//     }
//   };
//
// Parameter names (docs/checkpoint-format.md): q_proj, k_proj, v_proj, out_proj, each a Linear
// (d_model, d_model) with `weight` and (when bias) `bias` — the separate-projection names of
// MultiheadAttention, with nn.Linear's default initialisation.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "autograd/generator.h"
#include "nn/linear.h"
#include "nn/module.h"

namespace attn::nn {

struct HeadsQKV {
  Var q, k, v;  // (B,H,T,Dh) each
};

class ProjectedAttention : public Module {
 public:
  ProjectedAttention(
      std::string type_name, int64_t d_model, int64_t nhead, Generator& gen, bool bias = true);

  // x (B,T,d_model) -> q, k, v split into heads (B,H,T,Dh), Dh = d_model / nhead.
  HeadsQKV project(const Var& x) const;
  // y (B,H,T,Dh) -> out_proj(heads concatenated) (B,T,d_model).
  Var combine(const Var& y) const;

  int64_t d_model() const { return d_model_; }
  int64_t nhead() const { return nhead_; }
  int64_t head_dim() const { return d_model_ / nhead_; }

  std::shared_ptr<Linear> q_proj, k_proj, v_proj, out_proj;

 private:
  int64_t d_model_, nhead_;
};

}  // namespace attn::nn
