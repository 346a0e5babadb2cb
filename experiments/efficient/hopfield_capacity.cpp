// hopfield-capacity [002 §39.4.3]: self-attention read as a modern Hopfield network, and how
// many patterns each kind of Hopfield network can give back. The document's two numbers: the
// classical network (Hopfield 1982) stores about 0.14 d patterns of d binary neurons; the
// modern one (Ramsauer et al. 2020), whose update xi <- X^T softmax(beta X xi) is one row of
// attention, stores exponentially many, N ~ exp(d/2). Both are measured here, for d = 8 .. 64,
// by the same test (hopfield_networks.h):
//   - n random +-1 patterns are stored; a probe is one of them with round(flip * d) entries
//     negated; the retrieval succeeds when the final state's signs equal the pattern's in
//     every entry;
//   - the success rate is measured at a grid of n (classical n = 1, 2, 3, ...; modern n = 1 and
//     powers of sqrt(2) up to --max_patterns); the capacity is the n at which the rate first
//     falls below --level, interpolated between the two grid points around it (linearly in n
//     for the classical network, in log n for the modern one). A modern network that never
//     falls below the level on the grid has capacity at least --max_patterns (censored).
// The modern network runs twice: with --beta (1 by default, the regime of Ramsauer et al.'s
// binary-pattern demonstrations) and with beta = 1/sqrt(d), attention's own scale, as the
// document maps it. Beside them: the nearest-neighbour ceiling (no update that sees only the
// probe can succeed when another stored pattern is as close to it as its own).
//
//   attnlab run hopfield-capacity
//   attnlab run hopfield-capacity --flip 0.25 --level 0.5 --dims 8,16,24,32
#include "experiments/efficient/hopfield_networks.h"
#include "experiments/kit/kit.h"

namespace attn::experiments {

namespace {

constexpr double kClassicalPerNeuron = 0.14;  // 002 §39.4.3: ~0.14 d patterns
constexpr double kModernExponent = 0.5;       // 002 §39.4.3: N ~ exp(d/2)

// Success rate against n for one network at one d, and the capacity read off it.
struct Curve {
  std::vector<double> n, rate;
  double capacity = 0;
  bool censored = false;  // the rate never fell below the level on the grid
};

// The n where the rate first falls below `level`, interpolated between the grid points around
// it (in log n when `log_n`). Below the grid's first point: 0.
void read_capacity(Curve& c, double level, bool log_n) {
  for (size_t i = 0; i < c.rate.size(); ++i) {
    if (c.rate[i] >= level) continue;
    if (i == 0) return void(c.capacity = 0);
    const double f = (c.rate[i - 1] - level) / (c.rate[i - 1] - c.rate[i]);
    c.capacity = log_n ? std::exp(std::log(c.n[i - 1]) + f * std::log(c.n[i] / c.n[i - 1]))
                       : c.n[i - 1] + f * (c.n[i] - c.n[i - 1]);
    return;
  }
  c.capacity = c.n.empty() ? 0 : c.n.back();
  c.censored = true;
}

// Rates below this end a sweep: the capacity has been passed and larger n only cost time.
constexpr double kStopRate = 0.1;

// The success rate at each n of the grid, in order, until it falls below kStopRate; the
// capacity read off it (in log n when `log_n`).
Curve sweep(const std::vector<int64_t>& grid,
            const std::function<double(int64_t n)>& rate,
            double level,
            bool log_n) {
  Curve c;
  for (int64_t n : grid) {
    c.n.push_back(static_cast<double>(n));
    c.rate.push_back(rate(n));
    if (c.rate.back() < kStopRate) break;
  }
  read_capacity(c, level, log_n);
  return c;
}

// Classical: n = 1, 2, ..., d.
std::vector<int64_t> classical_grid(int64_t d) {
  std::vector<int64_t> grid(static_cast<size_t>(d));
  std::iota(grid.begin(), grid.end(), 1);
  return grid;
}

// Modern: n = 1 and round(sqrt(2)^k) for k = 1, 2, ... up to max_n (distinct values only).
std::vector<int64_t> modern_grid(int64_t max_n) {
  std::vector<int64_t> grid{1};
  for (int k = 1;; ++k) {
    const auto n = static_cast<int64_t>(std::llround(std::pow(2.0, k / 2.0)));
    if (n > max_n) break;
    if (n != grid.back()) grid.push_back(n);
  }
  return grid;
}

std::string capacity_text(const Curve& c, int digits = 3) {
  return c.censored ? fmt::format(">= {:.0f}", c.capacity) : sig(c.capacity, digits);
}

// Least-squares slope through the origin: sum x y / sum x^2.
double slope_through_origin(const std::vector<double>& xs, const std::vector<double>& ys) {
  double xy = 0, xx = 0;
  for (size_t i = 0; i < xs.size(); ++i) xy += xs[i] * ys[i], xx += xs[i] * xs[i];
  return xy / xx;
}

// Least-squares slope of ln y on x (y = a exp(slope x)); NaN with fewer than two points.
double log_linear_slope(const std::vector<double>& xs, const std::vector<double>& ys) {
  const size_t m = xs.size();
  if (m < 2) return NAN;
  double mx = 0, my = 0;
  for (size_t i = 0; i < m; ++i) mx += xs[i] / double(m), my += std::log(ys[i]) / double(m);
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < m; ++i)
    sxy += (xs[i] - mx) * (std::log(ys[i]) - my), sxx += (xs[i] - mx) * (xs[i] - mx);
  return sxy / sxx;
}

LinePlot success_plot(const std::vector<int64_t>& dims,
                      const std::vector<Curve>& curves,
                      double level,
                      const std::string& title,
                      bool log_x) {
  LinePlot p = kit::line_plot(title, "stored patterns n", "retrieval success rate",
                              log_x ? kit::Axes::kLogX : kit::Axes::kLinear);
  for (size_t i = 0; i < dims.size(); ++i)
    p.series.push_back({fmt::format("d = {}", dims[i]), curves[i].n, curves[i].rate});
  p.refs = {{RefLine::kHorizontal, level, fmt::format("level {:.2f}", level)}};
  return p;
}

struct Measured {
  std::vector<double> d, classical, modern, attention, ceiling;
  std::vector<Curve> classical_curves, modern_curves, attention_curves;
};

Measured measure(const Config& cfg, RunContext& ctx) {
  Generator gen(ctx.seed());
  const double flip = cfg.get_real("flip"), level = cfg.get_real("level");
  const double beta = cfg.get_real("beta");
  const int64_t steps = cfg.get_int("steps"), max_n = cfg.get_int("max_patterns");
  Measured m;
  CsvWriter log = ctx.csv("success", {"network", "d", "n", "rate"});  // 0 classical, 1 modern,
                                                                      // 2 modern at 1/sqrt(d)
  for (int64_t d : cfg.get_ints("dims")) {
    const int64_t flips = std::llround(flip * static_cast<double>(d));
    const RetrievalProbes pc{flips, cfg.get_int("classical_sets"), cfg.get_int("classical_probes")};
    const RetrievalProbes pm{flips, cfg.get_int("modern_sets"), cfg.get_int("modern_probes")};
    const auto modern = [&](double b) {
      return sweep(
          modern_grid(max_n), [&](int64_t n) { return modern_retrieval(d, n, pm, b, steps, gen); },
          level, true);
    };
    m.d.push_back(static_cast<double>(d));
    m.classical_curves.push_back(sweep(
        classical_grid(d), [&](int64_t n) { return classical_retrieval(d, n, pc, gen); }, level,
        false));
    m.modern_curves.push_back(modern(beta));
    m.attention_curves.push_back(modern(1 / std::sqrt(static_cast<double>(d))));
    m.classical.push_back(m.classical_curves.back().capacity);
    m.modern.push_back(m.modern_curves.back().capacity);
    m.attention.push_back(m.attention_curves.back().capacity);
    m.ceiling.push_back(nearest_neighbour_capacity(d, flips, level));
    int net = 0;
    for (const Curve* c :
         {&m.classical_curves.back(), &m.modern_curves.back(), &m.attention_curves.back()}) {
      for (size_t i = 0; i < c->n.size(); ++i)
        log.row({double(net), double(d), c->n[i], c->rate[i]});
      ++net;
    }
  }
  return m;
}

void report_table(const Config& cfg, RunContext& ctx, const Measured& m) {
  const double flip = cfg.get_real("flip");
  Table t(
      fmt::format("Capacity = n where the success rate falls below {:.2f}; probes with "
                  "round({} d) entries flipped",
                  cfg.get_real("level"), flip),
      {"d", "flipped", "classical", "0.14 d", "modern (beta " + sig(cfg.get_real("beta"), 3) + ")",
       "modern (beta 1/sqrt d)", "nearest-neighbour ceiling", "exp(d/2)"});
  for (size_t i = 0; i < m.d.size(); ++i)
    t.add_row({fmt::format("{:.0f}", m.d[i]), std::to_string(std::llround(flip * m.d[i])),
               sig(m.classical[i], 3), fixed(kClassicalPerNeuron * m.d[i], 2),
               capacity_text(m.modern_curves[i]), capacity_text(m.attention_curves[i]),
               sig(m.ceiling[i], 3), sig(std::exp(kModernExponent * m.d[i]), 3)});
  ctx.table(t);
}

// The capacities' growth: per neuron (classical), and of ln(capacity) per dimension over the d
// whose modern capacity was found on the grid (not censored).
struct Growth {
  double per_neuron = 0, modern = 0, ceiling = 0;
  std::vector<double> d, modern_capacity, ceiling_capacity;  // the uncensored d
};

// Every capacity and curve in results.json, and the fitted growth rates.
Growth results_part(const Config& cfg, RunContext& ctx, const Measured& m) {
  const auto& dims = cfg.get_ints("dims");
  ctx.result("dims", dims);
  ctx.result("classical_capacity", m.classical);
  ctx.result("modern_capacity", m.modern);
  ctx.result("attention_capacity", m.attention);
  ctx.result("nearest_neighbour_capacity", m.ceiling);
  std::vector<bool> censored, attention_censored;
  for (const Curve& c : m.modern_curves) censored.push_back(c.censored);
  for (const Curve& c : m.attention_curves) attention_censored.push_back(c.censored);
  ctx.result("modern_censored", censored);
  ctx.result("attention_censored", attention_censored);
  nlohmann::ordered_json curves = nlohmann::ordered_json::array();
  for (size_t i = 0; i < dims.size(); ++i)
    curves.push_back({{"d", dims[i]},
                      {"classical_n", m.classical_curves[i].n},
                      {"classical_rate", m.classical_curves[i].rate},
                      {"modern_n", m.modern_curves[i].n},
                      {"modern_rate", m.modern_curves[i].rate},
                      {"attention_n", m.attention_curves[i].n},
                      {"attention_rate", m.attention_curves[i].rate}});
  ctx.result("curves", curves);

  // The classical capacity per neuron, and the modern growth rate from the uncensored points.
  Growth g;
  g.per_neuron = slope_through_origin(m.d, m.classical);
  for (size_t i = 0; i < m.d.size(); ++i)
    if (!m.modern_curves[i].censored) {
      g.d.push_back(m.d[i]);
      g.modern_capacity.push_back(m.modern[i]);
      g.ceiling_capacity.push_back(m.ceiling[i]);
    }
  g.modern = log_linear_slope(g.d, g.modern_capacity);
  g.ceiling = log_linear_slope(g.d, g.ceiling_capacity);
  ctx.result("classical_per_neuron", g.per_neuron);
  ctx.result("modern_log_growth", g.modern);
  ctx.result("ceiling_log_growth", g.ceiling);
  ctx.result("modern_uncensored_dims", g.d);
  ctx.note(fmt::format(
      "Classical: capacity / d = {:.3f} (least squares through the origin over d = {}). "
      "Modern (beta = {}): ln(capacity) grows by {:.3f} per added dimension over the d whose "
      "capacity was found on the grid ({}); the nearest-neighbour ceiling grows by {:.3f} per "
      "dimension there. The document's exp(d/2) is 0.5 per dimension.",
      g.per_neuron, fmt::join(dims, ","), sig(cfg.get_real("beta"), 3), g.modern,
      fmt::join(g.d, ","), g.ceiling));
  return g;
}

// 002 §39.4.3's capacities beside ours: 0.14 d classical, exp(d/2) modern.
void compare_with_document(const Config& cfg, RunContext& ctx, const Measured& m, const Growth& g) {
  DocumentComparison cmp("002 §39.4.3: classical vs modern Hopfield capacity");
  const double flip = cfg.get_real("flip");
  const std::string criterion = fmt::format(
      "all d signs right after starting round({} d) flips away, in >= {:.0f}% of probes", flip,
      100 * cfg.get_real("level"));
  cmp.add("classical capacity / d (Hopfield 1982: ~0.14)", kClassicalPerNeuron, g.per_neuron, 0.04,
          fmt::format("0.14 is the large-d limit for states that keep ~1.5% of their bits wrong; "
                      "ours counts {} at finite d",
                      criterion),
          3);
  for (size_t i = 0; i < m.d.size(); ++i)
    cmp.add(fmt::format("classical capacity at d = {:.0f} (0.14 d)", m.d[i]),
            kClassicalPerNeuron * m.d[i], m.classical[i],
            std::max(1.0, 0.35 * kClassicalPerNeuron * m.d[i]),
            fmt::format("finite d and our criterion: {}", criterion), 2);
  // The headline: at d = 32 (or the largest d measured) the modern network holds far more.
  const size_t at = std::min(
      static_cast<size_t>(std::find(m.d.begin(), m.d.end(), 32.0) - m.d.begin()), m.d.size() - 1);
  const double ratio = m.modern[at] / std::max(m.classical[at], 1.0);
  ctx.result("modern_over_classical_d", m.d[at]);
  ctx.result("modern_over_classical", ratio);
  cmp.add_exact(
      fmt::format("modern capacity >> classical (x100 at d = {:.0f})", m.d[at]), "yes",
      kit::yes_no(ratio >= 100),
      fmt::format("{} vs {:.3g}: x{:.3g}{}", capacity_text(m.modern_curves[at]), m.classical[at],
                  ratio, m.modern_curves[at].censored ? " at least" : ""));
  if (!std::isnan(g.modern))
    cmp.add("modern: growth of ln(capacity) per dimension (exp(d/2): 0.5)", kModernExponent,
            g.modern, 0.05,
            fmt::format("with round({} d) entries flipped another random pattern lies as close "
                        "to the probe as its own once n nears 2^d / (Hamming ball of radius "
                        "{} d): that ceiling grows by {:.3f} per dimension over the same d, and "
                        "no update can beat it; exp(d/2) would need uncorrupted probes",
                        flip, flip, g.ceiling),
            3);
  // The update is attention: the path the modern network runs against the formula in double.
  // float32 rounds each score (|beta x . xi| <= beta d) and each of the n products, so the two
  // may differ by a few float32 epsilons times beta d + n, and by nothing more.
  const int64_t d = 32, n = 64;
  Generator gen(ctx.seed() + 17);
  const double beta = cfg.get_real("beta"), gap = modern_update_gap(d, n, beta, gen);
  ctx.result("modern_update_gap", gap);
  cmp.add("one modern update is one attention row: max |attention - X^T softmax(beta X xi)|", 0,
          gap, 4 * std::ldexp(1.0, -24) * (beta * d + n),
          fmt::format("d = {}, n = {} patterns; the tolerance is 4 float32 epsilons x (beta d + n)",
                      d, n),
          8);
  ctx.compare(cmp);
}

// Success against n for both networks, and capacity against d beside the document's.
void figures_part(const Config& cfg, RunContext& ctx, const Measured& m, const Growth& g) {
  const double level = cfg.get_real("level"), beta = cfg.get_real("beta");
  const auto& dims = cfg.get_ints("dims");

  ctx.figure(
      "classical_success",
      line_plot_svg(success_plot(dims, m.classical_curves, level,
                                 "Classical Hopfield (Hebbian weights, sign updates)", false)),
      "Classical network: retrieval success against stored patterns");
  ctx.figure("modern_success",
             line_plot_svg(success_plot(
                 dims, m.modern_curves, level,
                 fmt::format("Modern Hopfield = attention (beta {})", sig(beta, 3)), true)),
             "Modern network: retrieval success against stored patterns (log n)");
  LinePlot cap = kit::line_plot("Capacity against d", "d (neurons = pattern dimension)",
                                fmt::format("stored patterns at success rate {:.2f}", level),
                                kit::Axes::kLogY);
  std::vector<double> cd, cm;  // the censored modern points: lower bounds
  for (size_t i = 0; i < m.d.size(); ++i)
    if (m.modern_curves[i].censored) cd.push_back(m.d[i]), cm.push_back(m.modern[i]);
  std::vector<double> doc_classical, doc_modern;
  for (double d : m.d)
    doc_classical.push_back(kClassicalPerNeuron * d), doc_modern.push_back(std::exp(0.5 * d));
  cap.series = {{"classical (ours)", m.d, m.classical},
                {"0.14 d (document)", m.d, doc_classical, "", true, false},
                {fmt::format("modern, beta {} (ours)", sig(beta, 3)), g.d, g.modern_capacity},
                {"modern: no failure up to n (lower bound)", cd, cm, "", true},
                {"modern, beta 1/sqrt(d) (ours)", m.d, m.attention},
                {"nearest-neighbour ceiling", m.d, m.ceiling, "", true, false},
                {"exp(d/2) (document)", m.d, doc_modern, "", true, false}};
  ctx.figure("capacity", line_plot_svg(cap), "Capacity against d, ours beside the document's");
}

void run(const Config& cfg, RunContext& ctx) {
  ctx.section("Retrieval success against the number of stored patterns");
  ctx.note(fmt::format(
      "Each stored pattern has d independent +-1 entries. A probe is a stored pattern with "
      "round({} d) of its entries negated; it succeeds when the network's final state has the "
      "pattern's sign in every entry. Classical: Hebbian weights, asynchronous sign updates "
      "until nothing changes ({} x {} probes per n). Modern: {} update(s) xi <- X^T softmax(beta "
      "X xi), computed by scaled_dot_product_attention with query beta xi and keys = values = "
      "the patterns ({} x {} probes per n, up to n = {}).",
      cfg.get_real("flip"), cfg.get_int("classical_sets"), cfg.get_int("classical_probes"),
      cfg.get_int("steps"), cfg.get_int("modern_sets"), cfg.get_int("modern_probes"),
      cfg.get_int("max_patterns")));
  const Measured m = measure(cfg, ctx);
  report_table(cfg, ctx, m);
  const Growth g = results_part(cfg, ctx, m);
  compare_with_document(cfg, ctx, m, g);
  figures_part(cfg, ctx, m, g);
}

void check(const Config& cfg) {
  const double flip = cfg.get_real("flip");
  for (int64_t d : cfg.get_ints("dims")) {
    if (2 * std::llround(flip * static_cast<double>(d)) >= d)
      throw UsageError(fmt::format(
          "hopfield-capacity: --flip {} flips half or more of the d = {} entries; the probe "
          "would be closer to the negated pattern (use a --flip below 0.5)",
          flip, d));
  }
}

}  // namespace

Experiment hopfield_capacity() {
  Experiment e;
  e.name = "hopfield-capacity";
  e.source = "002 §39.4.3";
  e.purpose =
      "Self-attention as a modern Hopfield network: stored patterns retrieved against n, "
      "classical (~0.14 d) vs modern (exponential in d)";
  e.config.add_ints("dims", {8, 16, 24, 32, 40, 48, 56, 64}, "pattern dimensions d", {.min = 2})
      .add_real("flip", 0.125, "fraction of a probe's entries negated (round(flip d))",
                {.min = 0, .max = 0.5})
      .add_real("level", 0.9, "success rate that defines the capacity", {.min = 0.01, .max = 0.99})
      .add_real("beta", 1.0, "inverse temperature of the modern update", {.min = 1e-6})
      .add_int("steps", 1, "modern updates per probe", {.min = 1, .max = 100})
      .add_int("max_patterns", 65536, "largest n tried for the modern network", {.min = 2})
      .add_int("classical_sets", 50, "pattern draws per n (classical)", {.min = 1})
      .add_int("classical_probes", 8, "probes per draw (classical)", {.min = 1})
      .add_int("modern_sets", 4, "pattern draws per n (modern)", {.min = 1})
      .add_int("modern_probes", 64, "probes per draw (modern)", {.min = 1});
  e.quick = {{"dims", "8,16,32"}, {"max_patterns", "4096"}};
  e.check = check;
  e.run = run;
  return e;
}

}  // namespace attn::experiments
