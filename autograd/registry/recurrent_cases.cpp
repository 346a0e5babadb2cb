// Registry rows for the fused recurrent steps (autograd/ops/recurrent_cells.h): rnn (tanh,
// relu), gru and lstm, each on a full batch and on a padded one where batch row 1 has ended.
//
// PyTorch has the same steps as torch.rnn_tanh_cell / gru_cell / lstm_cell, which take the raw
// input x and W_ih. Ours takes the input projections gx instead; passing gx[t] as the "input"
// with W_ih = identity makes them the same function.
#include <fmt/format.h>

#include "autograd/ops/recurrent_cells.h"
#include "autograd/registry/registry.h"

namespace attn {

namespace {

constexpr int64_t kSteps = 2, kBatch = 3, kHidden = 3, kStep = 1;
const std::vector<int64_t> kLengths = {2, 1, 2};  // at step 1 row 1 is frozen
constexpr const char* kActiveRows = "torch.tensor([True, False, True])";

using StepFn = std::function<Var(const std::vector<Var>&, const std::vector<int64_t>&)>;

// gates: 1 (rnn), 3 (gru), 4 (lstm); the LSTM state is (2,B,H) = [h; c].
void add_rows(std::vector<OpCase>& rows,
              const std::string& name,
              int64_t gates,
              const std::string& torch_step,
              StepFn step) {
  const bool lstm = gates == 4;
  auto make = [gates, lstm](Generator& g) {
    const Shape state = lstm ? Shape{2, kBatch, kHidden} : Shape{kBatch, kHidden};
    return std::vector{float_input("gx", Tensor::randn({kSteps, kBatch, gates * kHidden}, g)),
                       float_input("h", Tensor::randn(state, g)),
                       float_input("w", Tensor::randn({gates * kHidden, kHidden}, g, 0.7)),
                       float_input("bi", Tensor::randn({gates * kHidden}, g)),
                       float_input("b", Tensor::randn({gates * kHidden}, g))};
  };
  const std::string mask = lstm ? fmt::format("{}[None, :, None]", kActiveRows)
                                : fmt::format("{}[:, None]", kActiveRows);
  rows.push_back(
      {name, torch_step, make, [step](const std::vector<Var>& v) { return step(v, {}); }});
  rows.push_back({name + "_padded", fmt::format("torch.where({}, {}, h)", mask, torch_step), make,
                  [step](const std::vector<Var>& v) { return step(v, kLengths); }});
}

}  // namespace

std::vector<OpCase> recurrent_op_cases() {
  std::vector<OpCase> rows;
  const std::string x = fmt::format("gx[{}]", kStep);
  const std::string eye = "torch.eye(w.shape[0])";
  for (auto act : {RnnNonlinearity::kTanh, RnnNonlinearity::kRelu}) {
    const std::string kind = act == RnnNonlinearity::kTanh ? "tanh" : "relu";
    add_rows(rows, "rnn_" + kind + "_cell", 1,
             fmt::format("torch.rnn_{}_cell({}, h, {}, w, bi, b)", kind, x, eye),
             [act](const std::vector<Var>& v, const std::vector<int64_t>& len) {
               return rnn_cell(v[0], kStep, v[1], v[2], v[3], v[4], act, len);
             });
  }
  add_rows(rows, "gru_cell", 3, fmt::format("torch.gru_cell({}, h, {}, w, bi, b)", x, eye),
           [](const std::vector<Var>& v, const std::vector<int64_t>& len) {
             return gru_cell(v[0], kStep, v[1], v[2], v[3], v[4], len);
           });
  add_rows(rows, "lstm_cell", 4,
           fmt::format("torch.stack(torch.lstm_cell({}, (h[0], h[1]), {}, w, bi, b))", x, eye),
           [](const std::vector<Var>& v, const std::vector<int64_t>& len) {
             return lstm_cell(v[0], kStep, v[1], v[2], v[3], v[4], len);
           });
  return rows;
}

}  // namespace attn
