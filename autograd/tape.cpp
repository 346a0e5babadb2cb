#include "autograd/tape.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
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

#ifdef ATTN_CHECK_FINITE
constexpr bool kAlwaysCheckFinite = true;  // Debug: every op, every time
#else
constexpr bool kAlwaysCheckFinite = false;  // Release: only with set_detect_anomaly(true)
#endif
std::atomic<bool> g_detect_anomaly{false};

// "(2,3) finite" or "(2,3) already non-finite (nan at flat index 4)".
std::string describe_input(const Tensor& t) {
  const int64_t i = first_non_finite(t);
  return shape_str(t.shape()) +
         (i < 0 ? " finite" : fmt::format(" already non-finite ({} at flat index {})", t[i], i));
}

std::string describe_inputs(const std::vector<Var>& inputs) {
  std::string s;
  for (size_t k = 0; k < inputs.size(); ++k) {
    s += fmt::format("\n  input {}: {}", k, describe_input(inputs[k].value()));
    if (!inputs[k].name().empty()) s += " [" + inputs[k].name() + "]";
  }
  return s;
}

bool any_non_finite(const std::vector<Var>& inputs) {
  for (const Var& v : inputs)
    if (first_non_finite(v.value()) >= 0) return true;
  return false;
}

std::string tape_position(int64_t position) {
  return position < 0 ? "not recorded on the tape (no input needs a gradient)"
                      : fmt::format("tape position #{}", position);
}

// Forward check: y is the output the op just computed from `inputs`.
void check_forward(const Op& op, const std::vector<Var>& inputs, const Tensor& y, int64_t pos) {
  const int64_t i = first_non_finite(y);
  if (i < 0) return;
  throw Error(fmt::format(
      "{}: non-finite output {} at flat index {} of its output {} (anomaly detection: the "
      "first op to produce NaN/Inf), {}{}\n  {}\n  `call attn::print_tape()` in gdb lists "
      "the records before it",
      op.name(), y[i], i, shape_str(y.shape()), tape_position(pos), describe_inputs(inputs),
      any_non_finite(inputs)
          ? "an input was already non-finite: with detection on since the start it came "
            "from a leaf (a parameter or the data), as no earlier op produced it"
          : "every input was finite: this op is where the NaN/Inf first appears"));
}

// Backward check: every input gradient the op's backward just wrote.
void check_backward(const Op& op, int64_t pos) {
  for (size_t k = 0; k < op.inputs.size(); ++k) {
    const Var& in = op.inputs[k];
    if (!in.has_grad()) continue;
    const Tensor& g = in.node().grad;
    const int64_t i = first_non_finite(g);
    if (i < 0) continue;
    const Tensor& dy = op.output.node().grad;
    throw Error(fmt::format(
        "{}: non-finite gradient {} at flat index {} for input {} {} in the backward pass "
        "(anomaly detection: the first backward to produce NaN/Inf), {}; the gradient it "
        "received, dy {}, was {}{}",
        op.name(), g[i], i, k, shape_str(in.shape()), tape_position(pos), shape_str(dy.shape()),
        first_non_finite(dy) < 0 ? "finite" : "already non-finite", describe_inputs(op.inputs)));
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

void set_detect_anomaly(bool on) {
  g_detect_anomaly.store(on, std::memory_order_relaxed);
}

bool detect_anomaly() {
  return g_detect_anomaly.load(std::memory_order_relaxed);
}

AnomalyMode::AnomalyMode(bool on) : previous_(detect_anomaly()) {
  set_detect_anomaly(on);
}
AnomalyMode::~AnomalyMode() {
  set_detect_anomaly(previous_);
}

int64_t first_non_finite(const Tensor& t) {
  // x - x is 0 for every finite x and NaN for an Inf or a NaN (and NaN != 0 is true). The
  // branch-free OR into an int over a block vectorizes (an early-exit isfinite loop does not,
  // nor does a bool accumulator with GCC 12); only a block that holds a bad value is scanned
  // again for its index.
  constexpr int64_t kBlock = 4096;
  const real* p = t.data();
  const int64_t n = t.numel();
  for (int64_t begin = 0; begin < n; begin += kBlock) {
    const int64_t end = std::min(n, begin + kBlock);
    int bad = 0;
    for (int64_t i = begin; i < end; ++i) bad |= p[i] - p[i] != 0;
    if (bad)
      for (int64_t i = begin; i < end; ++i)
        if (!std::isfinite(p[i])) return i;
  }
  return -1;
}

void check_finite(const Tensor& t, const char* op, const char* what) {
  const int64_t i = first_non_finite(t);
  if (i >= 0)
    throw Error(fmt::format("{}: non-finite {} at flat index {} (value {}) in a tensor of shape {}",
                            op, what, i, t[i], shape_str(t.shape())));
}

Var record(std::unique_ptr<Op> op, std::vector<Var> inputs, Tensor y) {
  bool track = false;
  if (grad_enabled())
    for (const Var& v : inputs) track = track || v.requires_grad();
  // Off: one load and a branch the CPU predicts, no per-element work.
  if (kAlwaysCheckFinite || detect_anomaly()) [[unlikely]]
    check_forward(*op, inputs, y, track ? static_cast<int64_t>(tape().size()) : -1);
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
  const bool check = kAlwaysCheckFinite || detect_anomaly();
  for (size_t k = records_.size(); k-- > 0;) {
    Op& op = *records_[k];
    if (!op.output.has_grad()) continue;
    op.backward();
    if (check) [[unlikely]]
      check_backward(op, static_cast<int64_t>(k));
    if (drop_spent_grads) drop_spent_grad(op.output);
  }
}

void Tape::forget_intermediate_grads() {
  for (auto& op : records_) op->output.zero_grad();
}

double Tape::forward_flops() const {
  double total = 0;
  for (const std::unique_ptr<Op>& r : records_) total += r->forward_flops();
  return total;
}

std::string Tape::to_string() const {
  std::string out = fmt::format("tape: {} records\n", records_.size());
  for (size_t i = 0; i < records_.size(); ++i) {
    const Op& op = *records_[i];
    std::string ins;
    for (const Var& v : op.inputs) {
      ins += fmt::format(" {}", shape_str(v.shape()));
      if (!v.name().empty()) ins += fmt::format("[{}]", v.name());
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
