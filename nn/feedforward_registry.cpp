#include "nn/feedforward_registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "autograd/error.h"
#include "nn/feedforward.h"
#include "nn/row_names.h"

namespace attn::nn {

void FeedForwardRegistry::add(FeedForwardRow row) {
  row_names::Reserved reserved;
  for (Activation a :
       {Activation::kReLU, Activation::kGELU, Activation::kGELUTanh, Activation::kSwiGLU})
    reserved.emplace_back(activation_name(a),
                          fmt::format("the built-in activation '{}'", activation_name(a)));
  row_names::check_new_row("feed-forward", row, static_cast<bool>(row.make),
                           "has no factory (.make)", reserved, rows_);
  rows_.push_back(std::move(row));
}

const FeedForwardRow* FeedForwardRegistry::find(const std::string& name) const {
  return row_names::find_row(rows_, name);
}

std::vector<std::string> FeedForwardRegistry::names() const {
  return row_names::names_of(rows_);
}

FeedForwardRegistry& feed_forward_registry() {
  static auto* registry = new FeedForwardRegistry;  // never destroyed: rows hold plugins' code
  return *registry;
}

std::shared_ptr<FeedForwardBlock> make_feed_forward(const std::string& name,
                                                    int64_t d_model,
                                                    int64_t dim_feedforward,
                                                    Generator& gen) {
  const FeedForwardRow* row = feed_forward_registry().find(name);
  if (!row) {
    const std::vector<std::string> names = feed_forward_registry().names();
    throw UsageError(fmt::format(
        "feed-forward '{}' is not a registered block ({}; a --plugin FILE.so adds its own)",
        row_names::shown(name),
        names.empty() ? std::string("none is loaded") : fmt::format("{}", fmt::join(names, " "))));
  }
  std::shared_ptr<FeedForwardBlock> block = row->make(d_model, dim_feedforward, gen);
  if (!block) throw Error(fmt::format("feed-forward '{}': its factory returned null", name));
  return block;
}

FloatGradientCheck check_feed_forward_gradient(const FeedForwardRow& row, uint64_t seed) {
  constexpr int64_t kDModel = 8, kDimFeedforward = 16;
  Generator gen(seed);
  const std::shared_ptr<FeedForwardBlock> block = row.make(kDModel, kDimFeedforward, gen);
  if (!block) throw Error("its factory returned null");
  block->eval();  // dropout off: the loss must be a function
  return check_float_gradient([&](const Var& x) { return block->forward(x); }, block->parameters(),
                              {2, 6, kDModel}, gen, fmt::format("feed-forward '{}'", row.name));
}

}  // namespace attn::nn
