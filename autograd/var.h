// Var: a handle to a value on the autodiff tape, with its gradient.
//
//   attn::Var w = attn::Var::parameter(attn::Tensor::randn({3, 2}, gen));  // a leaf to learn
//   attn::Var x = attn::Var::constant(input);                             // no gradient
//   attn::Var loss = attn::sum(attn::matmul(x, w));
//   loss.backward();                 // fills w.grad(); clears the tape
//   w.grad();                        // dloss/dw, same shape as w
//
// Copies of a Var share one Node, so a Var is cheap to pass by value.
#pragma once

#include <memory>
#include <string>

#include "autograd/tensor.h"

namespace attn {

// What a Var points at: the value, its accumulated gradient, and whether to track it.
struct Node {
  Tensor value;
  Tensor grad;  // empty (rank 0, unset) until has_grad
  bool has_grad = false;
  bool requires_grad = false;
  bool produced_by_op = false;  // an op's recorded output (not a leaf): its grad may be shared
  std::string name;             // optional, shown when the tape is printed
  int tape_uses = 0;            // records on the tape holding this node as an input

  // grad += d, allocating on first use. Takes d's storage when nobody else holds it (or, for
  // an op's output, shares it: copy-on-write).
  void accumulate_grad(const Tensor& d);
  // The gradient as a buffer this node alone holds, for ops that add into it in place: zeros
  // on first use, a private copy first if the buffer is shared (copy-on-write).
  Tensor& own_grad();
};

struct BackwardOptions {
  bool retain_graph = false;  // keep the tape after backward (e.g. to print it)
};

class Var {
 public:
  Var();  // a constant scalar 0
  explicit Var(Tensor value, bool requires_grad = false);
  static Var parameter(Tensor value, std::string name = "");
  static Var constant(Tensor value);

  const Tensor& value() const { return node_->value; }
  Tensor& value() { return node_->value; }
  const Shape& shape() const { return node_->value.shape(); }
  int rank() const { return node_->value.rank(); }
  int64_t size(int axis) const { return node_->value.size(axis); }
  int64_t numel() const { return node_->value.numel(); }
  real item() const { return node_->value.item(); }

  bool requires_grad() const { return node_->requires_grad; }
  bool has_grad() const { return node_->has_grad; }
  // The accumulated gradient; throws if backward never reached this Var.
  const Tensor& grad() const;
  Tensor& grad();
  void zero_grad();  // forget the gradient (the next backward starts from 0)
  void set_name(std::string name) { node_->name = std::move(name); }
  const std::string& name() const { return node_->name; }

  // A new Var with the same value (shared storage) that the tape does not track.
  Var detach() const;

  // Reverse pass from a scalar (upstream gradient 1) ...
  void backward(BackwardOptions options = {}) const;
  // ... or from any Var given its upstream gradient dy (same shape).
  void backward(const Tensor& dy, BackwardOptions options = {}) const;

  Node& node() const { return *node_; }
  const std::shared_ptr<Node>& node_ptr() const { return node_; }
  bool same_node(const Var& other) const { return node_ == other.node_; }

 private:
  std::shared_ptr<Node> node_;
};

}  // namespace attn
