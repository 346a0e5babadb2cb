// query-bars [002 §39.6]: one query at a time — the attention row of a few query positions as
// bar charts, the query's own key in red.
//
//   attnlab run query-bars
//   attnlab run query-bars --positions 0,4,8 --seed 5
//
// The same untrained head as attention-heatmap (same seed, same weights), read row by row: for
// each chosen query the weights over all keys, which keys it prefers, and how much it keeps for
// itself. Positions past the end of the sentence are dropped, as the document does.
#include "experiments/common/sentence_attention.h"
#include "experiments/kit/kit.h"

namespace attn::experiments {

namespace {

void run(const Config& cfg, RunContext& ctx) {
  Generator gen(ctx.seed());
  EmbeddedSentence s = embed_characters(cfg.get_string("sentence"), cfg.get_int("d_model"), gen);
  const int64_t t = static_cast<int64_t>(s.tokens.size());
  const Tensor w = single_head(s.x, cfg.get_int("d_k"), gen).weights.reshape({t, t});
  const auto labels = display_tokens(s.tokens);

  std::vector<int64_t> queries;
  for (int64_t p : cfg.get_ints("positions"))
    if (p < t) queries.push_back(p);
  if (queries.empty())
    throw UsageError(fmt::format("--positions: none is below the sentence length {}", t));

  Table tab("Each query's attention", {"query", "token", "self weight", "rank of self",
                                       "top 3 keys (weight)", "uniform 1/T"});
  std::vector<BarChart> panels;
  for (int64_t q : queries) {
    const std::vector<double> row = row_values(w, q);
    const std::vector<size_t> order = kit::ranking(row);
    const auto self_rank =
        std::find(order.begin(), order.end(), static_cast<size_t>(q)) - order.begin() + 1;
    std::string top;
    for (int i = 0; i < 3 && i < t; ++i)
      top += fmt::format("{}{} '{}' ({:.3f})", i ? ", " : "", order[i], labels[order[i]],
                         row[order[i]]);
    tab.add_row({std::to_string(q), labels[q], fixed(row[q], 3), std::to_string(self_rank), top,
                 fixed(1.0 / static_cast<double>(t), 3)});
    ctx.result(fmt::format("query_{}", q), row);

    BarChart b;
    b.labels = labels;
    b.series = {{"weight", row}};
    b.highlight = static_cast<int>(q);
    b.title =
        fmt::format("Query position {} ('{}') attending over keys (red = self)", q, labels[q]);
    b.y_label = "weight";
    panels.push_back(b);
  }
  ctx.table(tab);
  ctx.result("positions", queries);
  // Same character, same query vector, same row: without positions the head cannot tell the
  // four t's of the sentence apart. (Equal up to float rounding: the GEMM may sum rows in a
  // different order depending on where a row sits in its SIMD block.)
  auto same_row = [&](int64_t a, int64_t b) {
    for (int64_t j = 0; j < t; ++j)
      if (std::fabs(w[a * t + j] - w[b * t + j]) > 1e-6) return false;
    return true;
  };
  std::string same;
  std::vector<bool> done(queries.size(), false);
  for (size_t i = 0; i < queries.size(); ++i) {
    std::vector<int64_t> group{queries[i]};
    for (size_t j = i + 1; j < queries.size(); ++j)
      if (!done[j] && s.tokens[queries[i]] == s.tokens[queries[j]] &&
          same_row(queries[i], queries[j])) {
        group.push_back(queries[j]);
        done[j] = true;
      }
    if (group.size() > 1)
      same += fmt::format("{}{} ('{}')", same.empty() ? "" : "; ", fmt::join(group, ", "),
                          labels[queries[i]]);
  }
  if (!same.empty())
    ctx.note("Identical rows for queries " + same +
             ": the same character gives the same query vector, wherever it stands. Nothing in "
             "this head knows positions (see the anagrams experiment).");
  ctx.result("identical_rows", same);
  ctx.figure("query_bars", bar_panels_svg(panels, "Per-query attention bars"),
             "One bar chart per query position; the red bar is the query's own key");
}

}  // namespace

Experiment query_bars() {
  Experiment e;
  e.name = "query-bars";
  e.source = "002 §39.6";
  e.purpose = "Attention rows of a few query positions as bar charts (red = self)";
  add_sentence_fields(e.config);
  e.config.add_ints("positions", {0, 5, 10, 15, 21}, "query positions to show", {.min = 0});
  e.reference = true;  // its point is the computation: the elementary ops on the tape
  e.run = run;
  return e;
}

}  // namespace attn::experiments
