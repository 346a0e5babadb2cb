// Dropout as a module: active in train(), the identity in eval().
//
//   auto rng = std::make_shared<attn::Generator>(seed);   // owned by the model
//   attn::nn::Dropout drop(0.1, rng);
//   attn::Var h = drop.forward(x);                       // training: zero 10%, scale by 1/0.9
//   model.eval(); drop.forward(x);                       // eval: returns x unchanged
//
// Reproducible randomness. Every Dropout of a model draws its masks from one Generator that the
// model owns and hands to its layers as a shared_ptr (the stacks and models in nn/transformer/
// make one from their init generator when given none, and expose it as `dropout_generator()`).
// A single layer with dropout > 0 must be given one. Each forward draws one 64-bit seed from it and
// the mask is Philox-4x32-10 of (seed, element index) (autograd/kernels/philox.h), the same at any
// thread count. The masks of a step therefore depend only on that generator's state, a string:
//   checkpoint:  metadata["dropout_rng"] = model.dropout_generator()->state();
//   resume:      model.dropout_generator()->set_state(metadata.at("dropout_rng"));
// Restoring it with the weights and the optimizer makes a resumed run bit-identical to an
// uninterrupted one (the generator is not a tensor, so it travels in the safetensors metadata).
#pragma once

#include <memory>

#include "autograd/generator.h"
#include "nn/module.h"

namespace attn::nn {

class Dropout : public Module {
 public:
  // p in [0, 1). gen may be null only when p == 0 (a layer built with dropout switched off).
  explicit Dropout(double p = 0.5, std::shared_ptr<Generator> gen = nullptr);

  Var forward(const Var& x) const;  // x (...) -> (...)

  double p() const { return p_; }
  const std::shared_ptr<Generator>& generator() const { return gen_; }

 private:
  double p_;
  std::shared_ptr<Generator> gen_;
};

// The dropout generator of a model: `given` if not null, else a new one seeded from gen (so a
// model built from one seed is reproducible without the caller creating a generator).
std::shared_ptr<Generator> model_dropout_generator(std::shared_ptr<Generator> given,
                                                   Generator& gen);

}  // namespace attn::nn
