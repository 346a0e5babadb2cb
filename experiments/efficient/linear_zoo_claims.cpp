#include "experiments/efficient/linear_zoo_claims.h"

#include <utility>

#include <fmt/format.h>

#include "experiments/kit/spread.h"

namespace attn::experiments::zoo {

namespace {

// "a beats b" on held-out accuracy over n examples each: `yes`/`no` by the sign of the gap,
// not judged when the gap is within two standard errors of a difference of two rates.
void beats_row(DocumentComparison& cmp,
               const std::string& name,
               double a,
               double b,
               int64_t n,
               const std::string& why_no) {
  const double gap = a - b, se = kit::rate_difference_se(a, b, static_cast<double>(n));
  const std::string ours = gap > 0 ? "yes" : "no";
  cmp.add_exact(name, "yes", ours,
                ours == "yes" ? "" : fmt::format("{:.3f} against {:.3f}: {}", a, b, why_no))
      .not_judged_if(
          std::abs(gap) <= 2 * se,
          fmt::format("{:.3f} against {:.3f}: within two standard errors ({:.3f})", a, b, 2 * se));
}

void slope_rows(DocumentComparison& cmp, const std::vector<ZooVariant>& vs, const Costs& c) {
  const auto row = [&](const std::string& name, double doc, const std::string& claim) {
    const int i = index_of(vs, name);
    if (i >= 0)
      cmp.add(name + ": " + claim + " (memory exponent)", doc, c.memory_slope[i], 0.35,
              "over the three longest lengths", 2);
  };
  row("softmax", 2.0, "every query scores every key, O(T^2)");
  row("linear", 1.0, "the right product keeps a (D,M) state, O(T)");
  row("polaformer", 1.0, "two linear streams, still O(T)");
  row("transnormer", 1.0, "local attention below, linear above: the stack stays linear in T");
  row("sana", 1.0, "ReLU linear attention and a convolution, O(T)");
}

// 004 §4.2 on linear attention (PolaFormer's background): "more uniform weights and lower
// entropy" — the two cannot both hold; and PolaFormer's remedy, on the trained models' rows.
void entropy_rows(DocumentComparison& cmp,
                  const std::vector<ZooVariant>& vs,
                  const RowStats& rows) {
  const int soft = index_of(vs, "softmax"), lin = index_of(vs, "linear");
  const int pola = index_of(vs, "polaformer");
  if (soft >= 0 && lin >= 0) {
    const bool flatter = rows.max_weight[lin] < rows.max_weight[soft];
    cmp.add_exact(
        "trained linear (elu + 1) rows more uniform than softmax's (largest weight lower)", "yes",
        flatter ? "yes" : "no",
        flatter ? ""
                : fmt::format("largest weight {:.3f} against softmax's {:.3f}",
                              rows.max_weight[lin], rows.max_weight[soft]));
    const bool lower = rows.entropy[lin] < rows.entropy[soft];
    cmp.add_exact(
        "trained linear (elu + 1) rows lower in entropy than softmax's (the same sentence)", "yes",
        lower ? "yes" : "no",
        lower ? ""
              : fmt::format("{:.3f} nats against softmax's {:.3f}: more uniform rows have the "
                            "higher entropy (the uniform row's is the largest), so the sentence "
                            "cannot hold in both halves; 'higher entropy' is what is meant",
                            rows.entropy[lin], rows.entropy[soft]));
  }
  if (pola >= 0 && lin >= 0) {
    const bool lower = rows.entropy[pola] < rows.entropy[lin];
    cmp.add_exact("polaformer: the power map gives trained rows lower entropy than elu + 1's",
                  "yes", lower ? "yes" : "no",
                  lower ? ""
                        : fmt::format("{:.3f} nats against linear's {:.3f}", rows.entropy[pola],
                                      rows.entropy[lin]));
  }
}

void mechanism_rows(DocumentComparison& cmp,
                    const std::vector<ZooVariant>& vs,
                    const RowStats& rows,
                    const Reach& reach) {
  double off = 0;
  bool dilated = false;
  for (const char* name : {"atrous", "local-dilated"})
    if (const int i = index_of(vs, name); i >= 0) off += rows.off_lattice[i], dilated = true;
  if (dilated)
    cmp.add(
           "atrous: a query reads keys at equal intervals only (trained weights off the "
           "interval lattice)",
           0, off, 0, "", 0)
        .exact_quantity();
  cmp.add(fmt::format("atrous: {} keys {} apart reach {} positions back in one layer", reach.keys,
                      reach.dilation, (reach.keys - 1) * reach.dilation),
          static_cast<double>((reach.keys - 1) * reach.dilation),
          static_cast<double>(reach.atrous_farthest), 0, "farthest nonzero gradient", 0)
      .exact_quantity();
  cmp.add(
         "Longformer's dilated heads reach farther than its local heads with the same keys "
         "(ratio of the farthest positions)",
         static_cast<double>(reach.dilation),
         static_cast<double>(reach.atrous_farthest) / static_cast<double>(reach.local_farthest), 0,
         "", 2)
      .exact_quantity();
}

}  // namespace

void compare_linear(RunContext& ctx,
                    const std::vector<ZooVariant>& vs,
                    const Accuracies& a,
                    const Costs& c,
                    const RowStats& rows,
                    const Reach& reach,
                    const NoPositions& no_positions,
                    int64_t eval_size) {
  DocumentComparison cmp(
      "004 §0x04 4.1-4.2 (atrous, PolaFormer, TransNormer, SANA, AWRSR) vs ours");
  slope_rows(cmp, vs, c);
  entropy_rows(cmp, vs, rows);
  mechanism_rows(cmp, vs, rows, reach);
  const int soft = index_of(vs, "softmax"), lin = index_of(vs, "linear");
  if (const int p = index_of(vs, "polaformer"); p >= 0 && lin >= 0)
    beats_row(cmp, "polaformer: recalls more than linear attention (elu + 1)", a.recall[p],
              a.recall[lin], eval_size,
              "the negative parts and the power map did not help the lookup at this size");
  if (const int s = index_of(vs, "sana"); s >= 0 && !std::isnan(no_positions.linear_recall))
    beats_row(cmp,
              "sana: the depthwise convolution stands in for positions (recall without "
              "positions above linear attention's without positions)",
              a.recall[s], no_positions.linear_recall, eval_size,
              "the convolution did not give the order the lookup needs");
  const std::pair<const char*, const char*> refinements[] = {
      {"awrsr-simple", "awrsr-simple: refining the weights recalls more than softmax"},
      {"awrsr-additive", "awrsr-additive: refining the weights recalls more than softmax"}};
  for (const auto& [variant, row] : refinements)
    if (const int r = index_of(vs, variant); r >= 0 && soft >= 0)
      beats_row(cmp, row, a.recall[r], a.recall[soft], eval_size,
                "attention over the rows of A did not sharpen the lookup");
  ctx.compare(cmp);
}

}  // namespace attn::experiments::zoo
