// The op registry: one row per op, and every check iterates it.
//
//   for (const OpCase& c : attn::op_cases()) { ... }
//
// A row names the op, makes small seeded inputs, runs the op on them and gives the PyTorch
// expression that computes the same thing. From that single row:
//   - tests/gradcheck/ proves the gradient against central differences in double precision;
//   - tests/parity/ runs the same inputs through PyTorch and compares values and gradients.
// Adding an op therefore means: the op file, one line in functional.h, one row here.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "autograd/functional.h"

namespace attn {

// How a tensor crosses to PyTorch: as floats, as int64 class/index ids, or as bools.
enum class InputKind { kFloat, kIndex, kMask };

struct CaseInput {
  std::string name;  // the Python variable name in `torch`
  Tensor value;
  InputKind kind = InputKind::kFloat;
  bool differentiable = true;  // only float inputs can be; gradients are checked for these
};

struct OpCase {
  std::string name;   // unique row name, e.g. "matmul_batched_tb"
  std::string torch;  // Python expression over the input names, e.g. "torch.softmax(x, -1)"
  std::function<std::vector<CaseInput>(Generator&)> make_inputs;
  // Runs the op. Receives one Var per input, in order (non-differentiable ones as constants).
  std::function<Var(const std::vector<Var>&)> run;
  // Parity bound: max|ours - torch| / max(1, max|torch|) per tensor, float32 on both sides.
  double parity_tol = 1e-5;
  std::string parity_note;  // why a row's bound differs from the default
};

// Helpers for rows.
CaseInput float_input(std::string name, Tensor value);
CaseInput index_input(std::string name, Tensor value);  // whole numbers, no gradient
CaseInput mask_input(std::string name, Tensor value);   // 0/1, no gradient

// Rows with dropout draw their mask from a fresh generator with this seed on every call, so the
// gradcheck's repeated forward passes all see the same mask.
inline constexpr uint64_t kDropoutSeed = 99;
// The 0/1 keep mask that dropout(x, p) of an x of this shape draws from a fresh Generator(seed)
// (taken by running the op on ones). PyTorch cannot reproduce our random stream, so the parity
// expression receives this mask as an input instead.
Tensor dropout_keep_mask(const Shape& shape, real p, uint64_t seed);

// The tables, one per family of ops (autograd/registry/*_cases.cpp).
std::vector<OpCase> elementwise_cases();
std::vector<OpCase> reduction_cases();
std::vector<OpCase> linalg_shape_cases();
std::vector<OpCase> nn_op_cases();
std::vector<OpCase> attention_op_cases();
std::vector<OpCase> fused_attention_op_cases();
std::vector<OpCase> recurrent_op_cases();  // autograd/ops/recurrent_cells.h
std::vector<OpCase> ssm_op_cases();        // softplus, selective_scan (ssm_cases.cpp)

// Every row, in a stable order.
const std::vector<OpCase>& op_cases();

}  // namespace attn
