#include "nn/dropout.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"

namespace attn::nn {

Dropout::Dropout(double p, std::shared_ptr<Generator> gen)
    : Module("Dropout"), p_(p), gen_(std::move(gen)) {
  if (!(p >= 0.0 && p < 1.0)) throw Error(fmt::format("Dropout: p must be in [0, 1), got {}", p));
  if (p > 0.0 && !gen_)
    throw Error(fmt::format("Dropout(p={}): needs a Generator (the model's dropout generator)", p));
}

Var Dropout::forward(const Var& x) const {
  if (!is_training() || p_ == 0.0) return x;
  return dropout(x, static_cast<real>(p_), *gen_, true);
}

std::shared_ptr<Generator> model_dropout_generator(std::shared_ptr<Generator> given,
                                                   Generator& gen) {
  return given ? std::move(given) : std::make_shared<Generator>(gen.next_u64());
}

}  // namespace attn::nn
