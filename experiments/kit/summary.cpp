#include "experiments/kit/summary.h"

#include <cmath>

#include "autograd/error.h"
#include "experiments/run_context.h"

namespace attn::experiments::kit {

namespace {

const std::vector<double>& non_empty(const std::vector<double>& xs, const char* what) {
  if (xs.empty()) throw Error(std::string(what) + ": no values");
  return xs;
}

}  // namespace

double max_of(const std::vector<double>& xs) {
  return *std::max_element(non_empty(xs, "max_of").begin(), xs.end());
}

double min_of(const std::vector<double>& xs) {
  return *std::min_element(non_empty(xs, "min_of").begin(), xs.end());
}

double mean_of(const std::vector<double>& xs) {
  double sum = 0;
  for (double x : non_empty(xs, "mean_of")) sum += x;
  return sum / static_cast<double>(xs.size());
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size())
    throw Error("max_abs_diff: " + std::to_string(a.size()) + " against " +
                std::to_string(b.size()) + " values");
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

double mean_of_last(const std::vector<double>& xs, size_t k) {
  const size_t n = std::min(k, non_empty(xs, "mean_of_last").size());
  double sum = 0;
  for (size_t i = xs.size() - n; i < xs.size(); ++i) sum += xs[i];
  return sum / static_cast<double>(n);
}

void record(RunContext& ctx,
            std::initializer_list<std::pair<std::string, nlohmann::ordered_json>> results) {
  for (const auto& [name, value] : results) ctx.result(name, value);
}

}  // namespace attn::experiments::kit
