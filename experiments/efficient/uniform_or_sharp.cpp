#include "experiments/efficient/uniform_or_sharp.h"

#include <algorithm>
#include <functional>

#include "experiments/kit/kit.h"

namespace attn::experiments {

namespace {

// n * max_j p_j per n: 1 for the uniform row of n, n for a one-hot row.
std::vector<double> max_times_n(const MethodRows& m, const std::vector<int64_t>& ns) {
  std::vector<double> out;
  for (size_t j = 0; j < ns.size(); ++j)
    out.push_back(m.max_weight[j] * static_cast<double>(ns[j]));
  return out;
}

}  // namespace

bool at_every_n(const std::vector<double>& a,
                const std::vector<double>& b,
                const std::function<bool(double, double)>& pred) {
  return std::equal(a.begin(), a.end(), b.begin(), pred);
}

void compare_uniformity_and_entropy(const UniformityRows& rows, RunContext& ctx) {
  const std::vector<const MethodRows*> all{&rows.softmax, &rows.linear, &rows.sharpened};
  std::vector<std::string> columns{"n"};
  for (const MethodRows* m : all) {
    columns.push_back(m->name + ": H / log n");
    columns.push_back(m->name + ": n * max weight");
  }
  Table t("Two measures of how uniform the rows are (uniform row: H / log n = 1, n * max = 1)",
          columns);
  for (size_t j = 0; j < rows.ns.size(); ++j) {
    std::vector<std::string> cells{std::to_string(rows.ns[j])};
    for (const MethodRows* m : all) {
      cells.push_back(fixed(m->entropy_ratio[j], 3));
      cells.push_back(fixed(m->max_weight[j] * static_cast<double>(rows.ns[j]), 2));
    }
    t.add_row(cells);
  }
  ctx.section("004 §4.2's sentence: more uniform and lower entropy?");
  ctx.table(t);

  const MethodRows &soft = rows.softmax, &lin = rows.linear, &sharp = rows.sharpened;
  const bool more_uniform = at_every_n(lin.max_weight, soft.max_weight, std::less<>()),
             lower_entropy = at_every_n(lin.entropy_ratio, soft.entropy_ratio, std::less<>()),
             higher_entropy = at_every_n(lin.entropy_ratio, soft.entropy_ratio, std::greater<>());
  ctx.result("linear_more_uniform_than_softmax", more_uniform);
  ctx.result("linear_lower_entropy_than_softmax", lower_entropy);
  ctx.result("linear_max_weight_times_n", max_times_n(lin, rows.ns));
  ctx.result("softmax_max_weight_times_n", max_times_n(soft, rows.ns));
  const std::string which = fmt::format(
      "{} rows: entropy / log n {} against softmax's {}, largest weight x n {} against {}; "
      "the more uniform rows {} the higher entropy",
      lin.name, format_numbers(lin.entropy_ratio, 3), format_numbers(soft.entropy_ratio, 3),
      format_numbers(max_times_n(lin, rows.ns), 2), format_numbers(max_times_n(soft, rows.ns), 2),
      higher_entropy && more_uniform ? "have" : "do not always have");
  DocumentComparison cmp("004 §4.2 (PolaFormer's sentence) vs ours");
  cmp.add_exact(lin.name + " rows more uniform than softmax at every n (largest weight lower)",
                "yes", kit::yes_no(more_uniform), more_uniform ? "" : which);
  cmp.add_exact(lin.name + " rows lower entropy than softmax at every n", "yes",
                kit::yes_no(lower_entropy), lower_entropy ? "" : which);
  const bool sharper = at_every_n(sharp.max_weight, lin.max_weight, std::greater<>()) &&
                       at_every_n(sharp.entropy_ratio, lin.entropy_ratio, std::less<>());
  cmp.add_exact(fmt::format("{} makes the rows of {} less uniform and lower in entropy at every n",
                            sharp.name, lin.name),
                "yes", kit::yes_no(sharper),
                sharper
                    ? ""
                    : fmt::format("entropy / log n {} -> {}", format_numbers(lin.entropy_ratio, 3),
                                  format_numbers(sharp.entropy_ratio, 3)));
  ctx.compare(cmp);
}

}  // namespace attn::experiments
