#include "autograd/var.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/tape.h"
#include "autograd/tape_dot.h"

namespace attn {

void Node::accumulate_grad(const Tensor& d) {
  check_same_shape(value, d, "accumulate_grad (gradient vs value)");
  if (!has_grad) {
    // A gradient produced by a kernel is usually a fresh buffer: adopt it instead of copying.
    // A buffer someone else still holds (an op passed dy straight through, as add does) is
    // shared too when this node is an op's output: its gradient is only read from then on,
    // and own_grad() copies it before any write. A leaf (a parameter) always gets its own
    // buffer, because optimizers, clipping and zero_grad write into it in place.
    grad = d.storage_use_count() == 1 || produced_by_op ? d : d.clone();
    has_grad = true;
  } else {
    own_grad() += d;
  }
}

Tensor& Node::own_grad() {
  if (!has_grad) {
    grad = Tensor::zeros(value.shape());
    has_grad = true;
  } else if (grad.storage_use_count() > 1) {
    grad = grad.clone();  // never write into a buffer another tensor holds
  }
  return grad;
}

Var::Var() : Var(Tensor()) {}

Var::Var(Tensor value, bool requires_grad) : node_(std::make_shared<Node>()) {
  node_->value = std::move(value);
  node_->requires_grad = requires_grad;
}

Var Var::parameter(Tensor value, std::string name) {
  Var v(std::move(value), true);
  v.set_name(std::move(name));
  return v;
}

Var Var::constant(Tensor value) {
  return Var(std::move(value), false);
}

const Tensor& Var::grad() const {
  if (!node_->has_grad)
    throw Error(fmt::format(
        "Var::grad: no gradient{} (shape {}): call backward() on a loss that depends on it, and "
        "make sure it requires a gradient",
        node_->name.empty() ? "" : " for '" + node_->name + "'", shape_str(shape())));
  return node_->grad;
}

Tensor& Var::grad() {
  return const_cast<Tensor&>(static_cast<const Var*>(this)->grad());
}

void Var::zero_grad() {
  node_->grad = Tensor();
  node_->has_grad = false;
}

Var Var::detach() const {
  return Var(node_->value, false);
}

void Var::backward(BackwardOptions options) const {
  if (numel() != 1)
    throw Error(fmt::format(
        "backward: called without a gradient on a non-scalar of shape {}; pass the upstream "
        "gradient (backward(dy)) or reduce to a scalar first (e.g. sum or mean)",
        shape_str(shape())));
  backward(Tensor::ones(shape()), options);
}

void Var::backward(const Tensor& dy, BackwardOptions options) const {
  if (dy.shape() != shape())
    throw Error(fmt::format("backward: upstream gradient has shape {} but the value has shape {}",
                            shape_str(dy.shape()), shape_str(shape())));
  if (!requires_grad())
    throw Error(
        "backward: this value does not depend on anything that requires a gradient (was it "
        "computed under NoGrad, or from constants only?)");
  // Over a retained tape, the outputs' gradients from the last pass would be propagated again
  // (and this pass's added to them): each pass starts its intermediates from nothing.
  tape().forget_intermediate_grads();
  offer_graph(tape());  // for --tape-dot (tape_dot.h): the graph before it is replayed
  node_->accumulate_grad(dy.clone());
  // Without retain_graph the tape is cleared right after, so gradients only the tape can reach
  // are dropped as the walk passes them (Tape::run_backward); with it, they stay to be inspected.
  tape().run_backward(!options.retain_graph);
  if (!options.retain_graph) tape().clear();
}

}  // namespace attn
