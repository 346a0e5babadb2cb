#include "autograd/tape.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>

#include "autograd/error.h"

namespace attn {

namespace {
thread_local bool g_grad_enabled = true;

// Once the op that produced `out` has run its backward, out's gradient has been passed on and
// is never read again by the tape. Nobody else can read it either when every reference to the
// node is the tape's own (this record's output, plus one per consuming record's input), so
// drop it. This matters for speed, not just memory: ops that pass dy through (add, reshape)
// leave the same buffer in out's gradient and in their inputs' gradients, and while it is
// shared, the next op adding into an input's gradient in place has to copy it first.
void drop_spent_grad(const Var& out) {
  const std::shared_ptr<Node>& node = out.node_ptr();
  if (node->produced_by_op && node.use_count() == 1 + node->tape_uses) {
    node->grad = Tensor();
    node->has_grad = false;
  }
}

}  // namespace

Op::~Op() {
  for (Var& v : inputs) --v.node().tape_uses;
}

Tape& tape() {
  thread_local Tape t;
  return t;
}

void print_tape() {
  tape().print();
}

bool grad_enabled() {
  return g_grad_enabled;
}

NoGrad::NoGrad() : previous_(g_grad_enabled) {
  g_grad_enabled = false;
}
NoGrad::~NoGrad() {
  g_grad_enabled = previous_;
}

void check_finite(const Tensor& t, const char* op, const char* what) {
  const real* p = t.data();
  for (int64_t i = 0; i < t.numel(); ++i)
    if (!std::isfinite(p[i]))
      throw Error(
          fmt::format("{}: non-finite {} at flat index {} (value {}) in a tensor of shape {}", op,
                      what, i, p[i], shape_str(t.shape())));
}

Var record(std::unique_ptr<Op> op, std::vector<Var> inputs, Tensor y) {
#ifdef ATTN_CHECK_FINITE
  check_finite(y, op->name(), "output");
#endif
  bool track = false;
  if (grad_enabled())
    for (const Var& v : inputs) track = track || v.requires_grad();
  Var out(std::move(y), track);
  if (track) {
    op->inputs = std::move(inputs);
    for (Var& v : op->inputs) ++v.node().tape_uses;
    out.node().produced_by_op = true;
    op->output = out;
    tape().push(std::move(op));
  }
  return out;
}

void Tape::run_backward(bool drop_spent_grads) {
  // Reverse execution order is a valid topological order of a Wengert list: every record's
  // output was produced before any record that consumes it.
  for (auto it = records_.rbegin(); it != records_.rend(); ++it) {
    Op& op = **it;
    if (!op.output.has_grad()) continue;
    op.backward();
#ifdef ATTN_CHECK_FINITE
    for (const Var& in : op.inputs)
      if (in.has_grad()) check_finite(in.node().grad, op.name(), "gradient");
#endif
    if (drop_spent_grads) drop_spent_grad(op.output);
  }
}

void Tape::forget_intermediate_grads() {
  for (auto& op : records_) op->output.zero_grad();
}

std::string Tape::to_string() const {
  std::string out = fmt::format("tape: {} records\n", records_.size());
  for (size_t i = 0; i < records_.size(); ++i) {
    const Op& op = *records_[i];
    std::string ins;
    for (const Var& v : op.inputs) {
      ins += " " + shape_str(v.shape());
      if (!v.name().empty()) ins += "[" + v.name() + "]";
    }
    out += fmt::format("  #{:<4} {:<18}{} -> {}{}\n", i, op.name(), ins,
                       shape_str(op.output.shape()), op.output.has_grad() ? "  (has grad)" : "");
  }
  return out;
}

void Tape::print() const {
  fmt::print("{}", to_string());
}

}  // namespace attn
