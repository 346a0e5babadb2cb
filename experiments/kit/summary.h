// Small summaries every experiment writes by hand otherwise: one field of a list of rows as a
// column, its largest, smallest or mean value, the mean of the last few values, a claim's
// yes/no, and several results.json keys in one call.
//
//   std::vector<double> residuals = kit::column(fits, &ShiftFit::residual);
//   double worst = kit::max_of(fits, &ShiftFit::residual);       // max over the rows
//   double final_loss = kit::mean_of_last(losses, 25);           // the last 25 (all if fewer)
//   cmp.add_exact("the model learns it", "yes", kit::yes_no(accuracy > 0.9));
//   kit::record(ctx, {{"accuracy", accuracy}, {"steps", steps}});  // = ctx.result per key
//
// A field is anything std::invoke takes: a member pointer, a member function or a lambda.
#pragma once

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace attn::experiments {
class RunContext;
}

namespace attn::experiments::kit {

// field(row) for every row, as doubles.
template <class Row, class Field>
std::vector<double> column(const std::vector<Row>& rows, Field field) {
  std::vector<double> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back(static_cast<double>(std::invoke(field, r)));
  return out;
}

// The largest / smallest of xs; throws attn::Error when xs is empty.
double max_of(const std::vector<double>& xs);
double min_of(const std::vector<double>& xs);
// sum(xs) / n, summed in order; throws attn::Error when xs is empty.
double mean_of(const std::vector<double>& xs);
// max |a_i - b_i| (0 for empty vectors); throws attn::Error when the sizes differ.
double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b);
// The mean of the last min(k, n) values; throws attn::Error when xs is empty.
double mean_of_last(const std::vector<double>& xs, size_t k);

template <class Row, class Field>
double max_of(const std::vector<Row>& rows, Field field) {
  return max_of(column(rows, field));
}
template <class Row, class Field>
double min_of(const std::vector<Row>& rows, Field field) {
  return min_of(column(rows, field));
}

// "yes" or "no": the words of a yes/no claim in a DocumentComparison.
inline std::string yes_no(bool b) {
  return b ? "yes" : "no";
}

// ctx.result(name, value) for each pair, in order.
void record(RunContext& ctx,
            std::initializer_list<std::pair<std::string, nlohmann::ordered_json>> results);

}  // namespace attn::experiments::kit
