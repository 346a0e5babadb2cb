// The tape: a Wengert list of the ops executed since it was last cleared.
//
//   attn::Var y = attn::tanh(attn::matmul(x, w));   // each op appends one record
//   attn::tape().print();                            // "#0 matmul (4,3) (3,2) -> (4,2)" ...
//   y.backward(dy);                                  // replays the records in reverse
//   { attn::NoGrad off; auto z = attn::relu(x); }    // nothing recorded inside this scope
//
// An op is a named struct deriving from Op; its backward() reads the output's gradient (dy())
// and adds its contribution to each input's gradient (accumulate()). Because every record is
// an object with a virtual backward, `break SoftmaxOp::backward` stops in exactly one frame.
// The tape is thread-local: each thread records its own graph.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "autograd/var.h"

namespace attn {

class Op {
 public:
  virtual ~Op();  // releases its inputs' tape_uses
  // Short lowercase name as in the registry and in PyTorch where one exists ("softmax").
  virtual const char* name() const = 0;
  // Adds d(output)/d(input_i)^T * dy into each input that requires a gradient.
  virtual void backward() = 0;
  // FLOPs of the matrix products this op's forward did (a multiply-add counts 2), as
  // torch.utils.flop_counter.FlopCounterMode counts: matmul, linear and the recurrent steps'
  // h W_hh^T report theirs; element-wise ops, reductions and the fused attention kernels report
  // 0. On the reference path (autograd/mode.h) every product of a layer is one of the former.
  virtual double forward_flops() const { return 0; }

  std::vector<Var> inputs;
  Var output;

 protected:
  const Tensor& dy() const { return output.node().grad; }
  bool needs_grad(size_t i) const { return inputs[i].requires_grad(); }
  void accumulate(size_t i, const Tensor& d) {
    if (needs_grad(i)) inputs[i].node().accumulate_grad(d);
  }
  // For kernels that can add into their output (a GEMM with beta = 1): input i's gradient
  // buffer when it already has one, to add this op's contribution in place (no temporary, no
  // separate add pass); nullptr when it has none yet (write a new tensor and accumulate() it,
  // which adopts it without a copy).
  Tensor* existing_grad(size_t i) {
    Node& n = inputs[i].node();
    return n.has_grad ? &n.own_grad() : nullptr;
  }
};

class Tape {
 public:
  void push(std::unique_ptr<Op> op) { records_.push_back(std::move(op)); }
  // Drops every record (and with them every intermediate value no Var still holds).
  void clear() { records_.clear(); }
  size_t size() const { return records_.size(); }
  const Op& record(size_t i) const { return *records_[i]; }
  // Runs every record's backward in reverse execution order, skipping ops whose output
  // received no gradient. With drop_spent_grads, a non-leaf's gradient is dropped as soon as
  // its producer's backward has run, unless a Var outside the tape still holds the node (whose
  // owner may read .grad()): see drop_spent_grad in tape.cpp.
  void run_backward(bool drop_spent_grads = false);
  // Forgets the gradients an earlier backward left on the records' outputs (the tape was
  // retained): a pass must propagate its own upstream gradient only, as in PyTorch, while
  // leaves keep accumulating over passes. Called by Var::backward before it seeds a pass.
  void forget_intermediate_grads();
  // The sum of every record's forward_flops(): what the recorded forward multiplied.
  double forward_flops() const;
  // One line per record: index, op name, input shapes -> output shape.
  std::string to_string() const;
  void print() const;

 private:
  std::vector<std::unique_ptr<Op>> records_;
};

// This thread's tape.
Tape& tape();
// Callable from gdb: `call attn::print_tape()`.
void print_tape();

// Gradient recording is on unless a NoGrad scope is alive on this thread.
bool grad_enabled();
class NoGrad {
 public:
  NoGrad();
  ~NoGrad();
  NoGrad(const NoGrad&) = delete;
  NoGrad& operator=(const NoGrad&) = delete;

 private:
  bool previous_;
};

// Finishes an op call: when recording and any input requires a gradient, wires the op's
// inputs and output and appends it to the tape; otherwise discards the op (and what it
// saved). Returns the output Var. With anomaly detection on (always in Debug builds, which
// define ATTN_CHECK_FINITE), a NaN/Inf output throws (see set_detect_anomaly).
Var record(std::unique_ptr<Op> op, std::vector<Var> inputs, Tensor y);

// Anomaly detection, like PyTorch's torch.autograd.set_detect_anomaly: after every op's
// forward (in record) and every op's backward (in run_backward) its outputs are checked for
// NaN/Inf, and the first op that produces one throws an attn::Error naming the op, its tape
// position, its inputs' shapes and whether the inputs were already non-finite:
//
//   attn::set_detect_anomaly(true);        // or `attnlab train ... --detect-anomaly`
//   { attn::AnomalyMode on; loss = model.loss(batch); loss.backward(); }   // a scope
//
// Off by default in Release, where it costs one predictable branch per op (no per-element
// work); on always in Debug. The flag is process-wide (every thread's tape).
void set_detect_anomaly(bool on);
bool detect_anomaly();
class AnomalyMode {
 public:
  explicit AnomalyMode(bool on = true);
  ~AnomalyMode();
  AnomalyMode(const AnomalyMode&) = delete;
  AnomalyMode& operator=(const AnomalyMode&) = delete;

 private:
  bool previous_;
};

// The flat index of t's first NaN or Inf, or -1 when every value is finite.
int64_t first_non_finite(const Tensor& t);
// Throws attn::Error naming `op` and `what` if t holds a NaN or Inf.
void check_finite(const Tensor& t, const char* op, const char* what);

}  // namespace attn
