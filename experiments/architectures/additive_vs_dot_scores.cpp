#include "experiments/architectures/additive_vs_dot_scores.h"

#include "experiments/kit/kit.h"

#include "experiments/common/peak_memory.h"
#include "nn/attention/additive_attention.h"

namespace attn::experiments::additive {

namespace {

struct Sweep {
  std::vector<double> x;
  std::vector<ScoreCost> cost;
  // One field or ratio of every cell: get(&ScoreCost::dot_ms), get(&ScoreCost::time_ratio).
  template <class Field>
  std::vector<double> get(Field f) const {
    return kit::column(cost, f);
  }
};

Sweep sweep(const std::string& what,
            const std::vector<int64_t>& values,
            const Config& cfg,
            RunContext& ctx,
            Generator& gen) {
  const int64_t b = cfg.get_int("scale_batch"), h = cfg.get_int("scale_heads");
  const bool over_t = what == "T";
  const int64_t fixed_t = cfg.get_int("scale_t"), fixed_d = cfg.get_int("scale_d");
  Table tab(over_t ? fmt::format("B = {}, H = {}, d_h = {}, S = T", b, h, fixed_d)
                   : fmt::format("B = {}, H = {}, T = S = {}", b, h, fixed_t),
            {what, "dot ms", "additive ms", "time additive / dot", "dot MB", "additive MB",
             "memory additive / dot"});
  Sweep s;
  for (int64_t v : values) {
    const ScoreCost c = score_cost(b, h, over_t ? v : fixed_t, over_t ? fixed_d : v, cfg, gen);
    s.x.push_back(static_cast<double>(v));
    s.cost.push_back(c);
    tab.add_row({std::to_string(v), fixed(c.dot_ms, 3), fixed(c.add_ms, 3),
                 fixed(c.time_ratio(), 1), fixed(c.dot_bytes / 1e6, 2), fixed(c.add_bytes / 1e6, 2),
                 fixed(c.memory_ratio(), 1)});
  }
  ctx.table(tab);
  const std::string key = over_t ? "score_by_T" : "score_by_d";
  ctx.result(key + "_values", values);
  ctx.result(key + "_dot_ms", s.get(&ScoreCost::dot_ms));
  ctx.result(key + "_additive_ms", s.get(&ScoreCost::add_ms));
  ctx.result(key + "_time_ratio", s.get(&ScoreCost::time_ratio));
  ctx.result(key + "_memory_ratio", s.get(&ScoreCost::memory_ratio));
  ctx.result(key + "_dot_bytes", s.get(&ScoreCost::dot_bytes));
  ctx.result(key + "_additive_bytes", s.get(&ScoreCost::add_bytes));
  return s;
}

void scaling_figures(const Sweep& by_t, const Sweep& by_d, RunContext& ctx) {
  LinePlot t = kit::line_plot("Score step (forward + backward) against T",
                              "sequence length T (= S)", "ms", kit::Axes::kLogLog);
  t.series = {{"dot product", by_t.x, by_t.get(&ScoreCost::dot_ms), "#3b82f6"},
              {"additive", by_t.x, by_t.get(&ScoreCost::add_ms), "#f59e0b"}};
  ctx.figure("score_time_by_T", line_plot_svg(t),
             "The score step's time against T, both score functions");
  LinePlot d = kit::line_plot("What additive costs more, against the head width", "head width d_h",
                              "additive / dot", kit::Axes::kLogLog);
  d.series = {{"time additive / dot", by_d.x, by_d.get(&ScoreCost::time_ratio), "#ef4444"},
              {"memory additive / dot", by_d.x, by_d.get(&ScoreCost::memory_ratio), "#10b981"}};
  ctx.figure("ratio_by_d", line_plot_svg(d),
             "The (B,H,T,S,d_h) tensor: the memory ratio grows with d_h");
}

}  // namespace

ScoreCost score_cost(
    int64_t b, int64_t h, int64_t t, int64_t d, const Config& cfg, Generator& gen) {
  Var q = Var::parameter(Tensor::randn({b, h, t, d}, gen));
  Var k = Var::parameter(Tensor::randn({b, h, t, d}, gen));
  Var w = Var::parameter(Tensor::randn({h, d}, gen));
  const real scale = static_cast<real>(1.0 / std::sqrt(static_cast<double>(d)));
  auto zero = [&] {
    for (Var* p : {&q, &k, &w}) p->zero_grad();
  };
  // The dot product's scores as the fast path computes them: one GEMM with the scale inside.
  auto dot = [&] {
    zero();
    sum(matmul(q, k, false, true, scale)).backward();
  };
  auto additive = [&] {
    zero();
    sum(nn::additive_scores(q, k, w)).backward();
  };
  const std::vector<Timing> tm = time_interleaved(
      {dot, additive}, static_cast<int>(cfg.get_int("reps")), cfg.get_real("budget_s"));
  PeakMemory probe;
  ScoreCost c{tm[0].median_s * 1e3, tm[1].median_s * 1e3, tm[0].min_s * 1e3, tm[1].min_s * 1e3};
  c.dot_bytes = probe.measure(dot).tensor_bytes;
  c.add_bytes = probe.measure(additive).tensor_bytes;
  return c;
}

ScoreSweeps score_sweeps(const Config& cfg, RunContext& ctx, Generator& gen) {
  ctx.section("The score step alone: time and peak tensor memory against T and d_h");
  const Sweep by_t = sweep("T", cfg.get_ints("lengths"), cfg, ctx, gen);
  const Sweep by_d = sweep("d_h", cfg.get_ints("head_dims"), cfg, ctx, gen);
  ScoreSweeps s{by_d.x, by_d.get(&ScoreCost::memory_ratio), by_d.get(&ScoreCost::min_time_ratio)};
  std::vector<double> all = by_t.get(&ScoreCost::min_time_ratio);
  all.insert(all.end(), s.time_ratio_d.begin(), s.time_ratio_d.end());
  std::sort(all.begin(), all.end());
  // The typical ratio: the median over every cell of the two sweeps, of the ratio of minima.
  s.typical_ratio =
      all.size() % 2 ? all[all.size() / 2] : (all[all.size() / 2 - 1] + all[all.size() / 2]) / 2;
  s.memory_slope = log_log_slope(s.d_h, s.memory_ratio_d, 0);
  const double add_t_slope = log_log_slope(by_t.x, by_t.get(&ScoreCost::add_ms), 0);
  s.min_ratio = all.front();
  s.max_ratio = all.back();
  ctx.result("memory_ratio_growth_exponent_in_d", s.memory_slope);
  ctx.result("additive_time_growth_exponent_in_T", add_t_slope);
  ctx.result("min_score_time_ratio", s.min_ratio);
  ctx.result("typical_score_time_ratio", s.typical_ratio);
  ctx.note(fmt::format(
      "Peak tensor memory is the buffer pool's high-water mark during forward + backward, beyond "
      "what was alive before (q, k, w). The additive / dot memory ratio grows like d_h^{:.2f} "
      "(from {:.1f} at d_h = {:.0f} to {:.1f} at d_h = {:.0f}): the (B,H,T,S,d_h) tensors "
      "against the (B,H,T,S) scores. Additive time grows like T^{:.2f}. Compared by their "
      "fastest rounds, the additive score step is {:.1f} to {:.1f} times slower than the dot "
      "product's over the cells (median {:.1f}), although it counts only about twice the FLOPs.",
      s.memory_slope, s.memory_ratio_d.front(), s.d_h.front(), s.memory_ratio_d.back(),
      s.d_h.back(), add_t_slope, s.min_ratio, s.max_ratio, s.typical_ratio));
  scaling_figures(by_t, by_d, ctx);
  return s;
}

}  // namespace attn::experiments::additive
