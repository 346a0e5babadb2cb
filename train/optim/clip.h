// Gradient clipping by global norm, as torch.nn.utils.clip_grad_norm_.
//
//   double norm = attn::train::clip_grad_norm(model.parameters(), /*max_norm=*/1.0);
//
// total = sqrt(sum over every gradient element of g^2) (the norm of all gradients viewed as one
// vector); every gradient is multiplied by min(1, max_norm / (total + 1e-6)). Returns total
// (before clipping). Parameters without a gradient are skipped. A non-finite total throws
// when error_if_nonfinite (PyTorch's flag), otherwise the gradients are scaled anyway.
#pragma once

#include <vector>

#include "autograd/var.h"

namespace attn::train {

double clip_grad_norm(const std::vector<Var>& params,
                      double max_norm,
                      bool error_if_nonfinite = false);

// The global norm alone (nothing is changed).
double grad_norm(const std::vector<Var>& params);

}  // namespace attn::train
