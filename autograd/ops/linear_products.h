// The two products of every op shaped like a linear layer, written once for LinearOp
// (ops/linear.cpp) and its fused variants LinearReluOp and GeluLinearOp (ops/fused/):
//
//   struct LinearOp final : LinearProducts {
//     Tensor forward(const Tensor& x, const Tensor& w, const Tensor* b) {
//       return product("linear", x, x, w, b, /*relu=*/false);      // y = x W^T + b
//     }
//     void backward() override { backward_products(dy()); }     // dx, dW, db
//   };
//
// Forward: y (rows,out) = a (rows,in) W^T + b through kernels::panel_gemm, whose register blocks
// start from the bias (y is written once, no separate add pass) and which can apply a ReLU before
// its store. Backward, with g the gradient at the product's output:
//   dx = g W  (optionally times an element-wise scale: a GELU's derivative),
//   dW = g^T a,  db = sum over rows of g.
// Speed, all measured in docs/performance.md: the two products run side by side, one per core
// (kernels::run_pair); db's column sums come out of the dx product, which reads g's rows anyway;
// when x or W already has a gradient (x feeds a residual add too, W is shared), the GEMM adds
// into it (beta = 1) instead of writing a temporary that is added afterwards.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "autograd/tape.h"

namespace attn {

class LinearProducts : public Op {
 protected:
  Tensor a, w;  // the product's left operand (x, or GELU(x)) and the weight (shared storage)
  bool has_bias = false;
  int64_t rows = 0, in = 0, out = 0;

  // Checks x (..., in), w (out, in), b (out) (naming `op` in the error), saves a and w, and
  // returns y (..., out) = a W^T + b, with max(., 0) applied before the store when relu.
  // a is x itself or an element-wise function of it (same shape).
  Tensor product(const char* op,
                 const Tensor& x,
                 const Tensor& a_in,
                 const Tensor& w_in,
                 const Tensor* b,
                 bool relu);

  // g (rows,out): the gradient at the product's output (dy, or dy masked by a ReLU).
  // dx_scale (rows,in) or nullptr: dx = (g W) o dx_scale, written fresh (never added in place).
  // db_ready: the bias gradient when the caller already has it (made in its masking pass);
  // else it comes from the dx product or from g's column sums.
  void backward_products(const Tensor& g,
                         const real* dx_scale = nullptr,
                         const Tensor* db_ready = nullptr);

 public:
  // a (rows,in) W^T (in,out): 2 rows in out (the bias add is not a product).
  double forward_flops() const override {
    return 2.0 * static_cast<double>(rows) * static_cast<double>(in) * static_cast<double>(out);
  }
};

// Records op with inputs {x, weight} or {x, weight, bias}, output y.
Var record_linear(std::unique_ptr<Op> op,
                  const Var& x,
                  const Var& weight,
                  const std::optional<Var>& bias,
                  Tensor y);

}  // namespace attn
