#include "nn/feedforward_registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "autograd/error.h"
#include "nn/feedforward.h"
#include "nn/row_names.h"

namespace attn::nn {

void FeedForwardRegistry::add(FeedForwardRow row) {
  using row_names::lowered;
  if (!row_names::valid(row.name))
    throw UsageError(
        fmt::format("feed-forward name '{}' must be non-empty and use only letters, digits, "
                    "'_', '-' and '.'",
                    row_names::shown(row.name)));
  if (!row.make)
    throw UsageError(fmt::format("feed-forward '{}' has no factory (.make)", row.name));
  for (Activation a :
       {Activation::kReLU, Activation::kGELU, Activation::kGELUTanh, Activation::kSwiGLU})
    if (lowered(activation_name(a)) == lowered(row.name))
      throw UsageError(fmt::format(
          "feed-forward name '{}' is taken (the built-in activation '{}'); choose another",
          row.name, activation_name(a)));
  for (const FeedForwardRow& r : rows_)
    if (lowered(r.name) == lowered(row.name))
      throw UsageError(
          fmt::format("feed-forward name '{}' is taken (feed-forward '{}', {}); choose another",
                      row.name, r.name, row_names::origin_text(r.origin)));
  rows_.push_back(std::move(row));
}

const FeedForwardRow* FeedForwardRegistry::find(const std::string& name) const {
  for (const FeedForwardRow& r : rows_)
    if (r.name == name) return &r;
  return nullptr;
}

std::vector<std::string> FeedForwardRegistry::names() const {
  std::vector<std::string> out;
  for (const FeedForwardRow& r : rows_) out.push_back(r.name);
  return out;
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
