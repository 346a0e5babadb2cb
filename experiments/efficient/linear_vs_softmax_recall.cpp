// linear-vs-softmax-recall [000 §8.2, 004 §4.2 PolaFormer]: associative recall. Store n
// key -> value pairs, ask with each key, and count how often the answer is the right value.
// Softmax attention is sharp; linear attention with phi = elu + 1 is smooth (000 §8.2: "everyone
// gets a say") and keeps everything in one F x d_v state, a memory of finite capacity. A sharper
// feature map (after PolaFormer, 004 §4.2) lowers the entropy; the state's capacity stays.
//
//   attnlab run linear-vs-softmax-recall
//   attnlab run linear-vs-softmax-recall --d_k 32 --seeds 20 --power 2
//   attnlab run linear-vs-softmax-recall --plugin build/librandom_features.so   # a student's map
//
// One trial: keys k_j = random directions of length key_norm (default sqrt(d_k): entries of
// variance 1), values v_j = random unit vectors in d_v = d_k, queries = the keys themselves.
// softmax, elu + 1, polar^p and every plugin feature map (recall_methods.h) read the same keys.
// Recall: the answer to query i is right when v_i is the stored value nearest (by dot product,
// the values being unit) to the output. The implied attention weights are the output when the
// values are the rows of I_n (then output row i is weight row i): their argmax, their entropy.
//
// Why polar^p (PolaFormer's same-sign stream with a fixed power): elu + 1 maps every coordinate
// to a positive number near 1 when |x| is small, so phi(q).phi(k) is dominated by a constant and
// hardly depends on whether q and k agree; splitting by sign keeps agreement in negative
// coordinates as evidence too, and a power with positive first and second derivatives makes
// large agreements count far more than small ones, which lowers the entropy (the paper's
// argument). PolaFormer's opposite-sign stream and learned powers need training; without it they
// have nothing to learn, so they are left out.
#include "experiments/common/distribution.h"
#include "experiments/efficient/recall_methods.h"
#include "experiments/efficient/uniform_or_sharp.h"
#include "experiments/kit/kit.h"
#include "experiments/kit/max_abs.h"
#include "nn/attention/linear_attention.h"

namespace attn::experiments {

namespace {

// n random directions in d dimensions, of length `norm`, as (1,1,n,d).
Tensor random_directions(int64_t n, int64_t d, double norm, Generator& gen) {
  Tensor x = Tensor::randn({1, 1, n, d}, gen);
  for (int64_t i = 0; i < n; ++i) {
    double s = 0;
    for (int64_t j = 0; j < d; ++j) s += static_cast<double>(x[i * d + j]) * x[i * d + j];
    const double f = norm / std::sqrt(s);
    for (int64_t j = 0; j < d; ++j) x[i * d + j] = static_cast<real>(x[i * d + j] * f);
  }
  return x;
}

// Fraction of rows i of scores (n, n) whose largest entry is in column i.
double diagonal_argmax_rate(const Tensor& scores, int64_t n) {
  int64_t hits = 0;
  for (int64_t i = 0; i < n; ++i) {
    const real* row = scores.data() + i * n;
    hits += std::max_element(row, row + n) - row == i;
  }
  return static_cast<double>(hits) / static_cast<double>(n);
}

// One trial of one method: recall by nearest value, argmax of the implied weights, entropy.
struct Trial {
  double recall = 0, weight_argmax = 0, entropy = 0, max_weight = 0;
};

Trial trial(const RecallMethod& m, const Var& keys, const Var& values, const Var& one_hot) {
  NoGrad off;
  const int64_t n = keys.size(2);
  const Var out = m.attend(keys, keys, values);                  // (1,1,n,d_v)
  const Tensor sim = matmul(out, values, false, true).value();   // (1,1,n,n): out_i . v_j
  const Tensor weights = m.attend(keys, keys, one_hot).value();  // (1,1,n,n)
  return {diagonal_argmax_rate(sim, n), diagonal_argmax_rate(weights, n), mean_row_entropy(weights),
          mean_row_max(weights)};
}

// Means over seeds, per method and n.
struct Sweep {
  std::vector<std::string> names;
  std::vector<std::vector<double>> recall, weight_argmax, entropy_ratio, max_weight;  // [method][n]
};

Sweep sweep(const std::vector<RecallMethod>& ms,
            const std::vector<int64_t>& ns,
            int64_t d,
            double key_norm,
            int64_t seeds,
            uint64_t seed) {
  Sweep s;
  for (const auto& m : ms) s.names.push_back(m.name);
  s.recall.assign(ms.size(), std::vector<double>(ns.size()));
  s.weight_argmax = s.entropy_ratio = s.max_weight = s.recall;
  for (size_t j = 0; j < ns.size(); ++j) {
    const int64_t n = ns[j];
    for (int64_t r = 0; r < seeds; ++r) {
      // The same keys and values for every method: paired comparisons.
      Generator gen(seed + 7919 * static_cast<uint64_t>(r) + 104729 * static_cast<uint64_t>(n));
      const Var keys = Var::constant(random_directions(n, d, key_norm, gen));
      const Var values = Var::constant(random_directions(n, d, 1.0, gen));
      const Var one_hot = Var::constant(identity(n).reshape({1, 1, n, n}));
      for (size_t i = 0; i < ms.size(); ++i) {
        const Trial t = trial(ms[i], keys, values, one_hot);
        const auto w = 1.0 / static_cast<double>(seeds);
        s.recall[i][j] += w * t.recall;
        s.weight_argmax[i][j] += w * t.weight_argmax;
        s.entropy_ratio[i][j] += w * t.entropy / std::log(static_cast<double>(n));
        s.max_weight[i][j] += w * t.max_weight;
      }
    }
  }
  return s;
}

// The n where recall falls through one half, interpolated on log axes; NaN when it does not.
double half_recall_n(const std::vector<int64_t>& ns, const std::vector<double>& recall) {
  std::vector<double> x(ns.begin(), ns.end()), y;
  for (double r : recall) y.push_back(std::max(r, 1e-9) / 0.5);
  return log_log_crossing(x, y, true);
}

std::string describe_n(double n50, const std::vector<int64_t>& ns, const std::vector<double>& r) {
  if (!std::isnan(n50)) return fmt::format("{:.3g}", n50);
  return r.front() < 0.5 ? fmt::format("< {}", ns.front()) : fmt::format("> {}", ns.back());
}

// The keys' length: --key_norm, or sqrt(d_k) (entries of variance 1) when it is 0.
double key_norm(const Config& cfg, int64_t dk) {
  const double setting = cfg.get_real("key_norm");
  return setting > 0 ? setting : std::sqrt(static_cast<double>(dk));
}

// 0. The composed readout equals nn::linear_attention for phi = elu + 1 (returned: max |diff|,
// the outputs' scale), and with one-hot values softmax attention's output rows are its weights.
std::pair<double, double> equivalence_part(const Config& cfg, RunContext& ctx) {
  NoGrad off;
  Generator gen(ctx.seed());
  const int64_t n = cfg.get_ints("n").back(), d = cfg.get_int("d_k");
  const Var k = Var::constant(random_directions(n, d, key_norm(cfg, d), gen));
  const Var v = Var::constant(random_directions(n, d, 1.0, gen));
  const Tensor ours = kernel_attention(nn::elu_feature_map(k), nn::elu_feature_map(k), v).value();
  const Tensor lib = nn::linear_attention(k, k, v, false).value();
  const std::pair e{max_abs_diff(ours, lib), kit::max_abs(lib)};
  const nn::AttentionOutput a =
      nn::scaled_dot_product_attention(k, k, Var::constant(identity(n).reshape({1, 1, n, n})));
  ctx.result("composed_vs_linear_attention_max_diff", e.first);
  ctx.result("composed_vs_linear_attention_scale", e.second);
  ctx.result("softmax_output_onehot_vs_weights_max_diff",
             max_abs_diff(a.out.value(), a.weights.value()));
  return e;
}

// 1. Recall, entropy and largest weight against n at the chosen d_k: tables, results, figures.
Sweep recall_part(const Config& cfg, const std::vector<RecallMethod>& ms, RunContext& ctx) {
  const int64_t d = cfg.get_int("d_k"), seeds = cfg.get_int("seeds");
  const std::vector<int64_t> ns = cfg.get_ints("n");
  ctx.section(fmt::format("Recall of n stored pairs, d_k = d_v = {}, key length {:.3g}, {} seeds",
                          d, key_norm(cfg, d), seeds));
  const Sweep s = sweep(ms, ns, d, key_norm(cfg, d), seeds, ctx.seed());
  std::vector<std::string> header{"n"};
  for (const char* column : {": recall", ": H / log n", ": max weight"})
    for (const auto& name : s.names) header.push_back(name + column);
  Table t(
      "Recall (right value nearest the output), entropy of the implied weights / log n, "
      "mean largest weight",
      header);
  std::vector<std::string> argmax_header{"n"};
  argmax_header.insert(argmax_header.end(), s.names.begin(), s.names.end());
  Table ta("Argmax of the implied weights on the right key (values one-hot: no value crosstalk)",
           argmax_header);
  for (size_t j = 0; j < ns.size(); ++j) {
    std::vector<std::string> row{std::to_string(ns[j])}, argmax_row{std::to_string(ns[j])};
    for (const auto* per_method : {&s.recall, &s.entropy_ratio, &s.max_weight})
      for (const auto& v : *per_method) row.push_back(fixed(v[j], 3));
    for (const auto& v : s.weight_argmax) argmax_row.push_back(fixed(v[j], 3));
    t.add_row(row);
    ta.add_row(argmax_row);
  }
  ctx.table(t);
  ctx.table(ta);
  ctx.result("n", ns);
  ctx.result("d_k", d);
  ctx.result("methods", s.names);
  for (size_t i = 0; i < ms.size(); ++i) {
    ctx.result(fmt::format("recall_{}", ms[i].key), s.recall[i]);
    ctx.result(fmt::format("weight_argmax_{}", ms[i].key), s.weight_argmax[i]);
    ctx.result(fmt::format("entropy_ratio_{}", ms[i].key), s.entropy_ratio[i]);
    ctx.result(fmt::format("max_weight_{}", ms[i].key), s.max_weight[i]);
  }
  const std::vector<double> xs(ns.begin(), ns.end());
  LinePlot pr = kit::line_plot(fmt::format("Associative recall, d_k = {}", d), "stored pairs n",
                               "recall (fraction right)", kit::Axes::kLogX);
  pr.refs = {{RefLine::kVertical, static_cast<double>(d), fmt::format("n = d_k = {}", d)}};
  LinePlot pe = pr;
  pe.title = fmt::format("Entropy of the implied attention rows, d_k = {}", d);
  pe.y_label = "entropy / log n (1 = uniform)";
  for (size_t i = 0; i < ms.size(); ++i) {
    pr.series.push_back({s.names[i], xs, s.recall[i], ""});
    pe.series.push_back({s.names[i], xs, s.entropy_ratio[i], ""});
  }
  ctx.figure("recall", line_plot_svg(pr), "Recall against the number of stored pairs");
  ctx.figure("entropy", line_plot_svg(pe),
             "How flat the weights are: elu + 1 near uniform, the power map sharper");
  return s;
}

// 2. Capacity: the n where recall falls through 1/2 (NaN: not inside --capacity_n), per d_k.
struct Capacity {
  std::vector<std::vector<double>> n50;      // [method][d_k]
  std::vector<double> n50_over_f;            // the power map's n50 / its F = 2 d_k state rows
  std::vector<double> softmax_recall_first;  // softmax recall against n at the first d_k
};

Capacity capacity_part(const Config& cfg, const std::vector<RecallMethod>& ms, RunContext& ctx) {
  const std::vector<int64_t> cap_ns = cfg.get_ints("capacity_n");
  ctx.section("Capacity: the n at which recall falls to 1/2, against d_k");
  std::vector<std::string> cap_header{"d_k", "features F (polar map)"};
  for (const auto& m : ms) cap_header.push_back(m.name + ": n at recall 1/2");
  cap_header.push_back(ms[2].name + ": n / F");
  Table tc("n at recall 1/2 (interpolated on log axes over --capacity_n)", cap_header);
  LinePlot pc = kit::line_plot(fmt::format("Recall of {} against n, by d_k", ms[2].name),
                               "stored pairs n", "recall", kit::Axes::kLogX);
  pc.refs = {{RefLine::kHorizontal, 0.5, "recall 1/2"}};
  Capacity cap;
  cap.n50.resize(ms.size());
  for (int64_t dk : cfg.get_ints("capacity_d_k")) {
    const Sweep c = sweep(ms, cap_ns, dk, key_norm(cfg, dk), cfg.get_int("seeds"), ctx.seed() + 1);
    const double f = 2.0 * static_cast<double>(dk);
    std::vector<std::string> row{std::to_string(dk), fmt::format("{:.0f}", f)};
    for (size_t i = 0; i < ms.size(); ++i) {
      cap.n50[i].push_back(half_recall_n(cap_ns, c.recall[i]));
      row.push_back(describe_n(cap.n50[i].back(), cap_ns, c.recall[i]));
    }
    if (cap.softmax_recall_first.empty()) cap.softmax_recall_first = c.recall[0];
    const double per_row = cap.n50_over_f.emplace_back(cap.n50[2].back() / f);  // NaN: no n50
    row.push_back(std::isnan(per_row) ? std::string("-") : fixed(per_row, 2));
    tc.add_row(row);
    pc.series.push_back({fmt::format("d_k = {}", dk), {cap_ns.begin(), cap_ns.end()}, c.recall[2]});
    std::vector<size_t> order{2, 0, 1};  // the power map's first, as before plugins existed
    for (size_t i = 3; i < ms.size(); ++i) order.push_back(i);
    for (size_t i : order)
      ctx.result(fmt::format("capacity_recall_{}_d{}", ms[i].key, dk), c.recall[i]);
  }
  ctx.table(tc);
  auto nulls = [](const std::vector<double>& xs) {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (double x : xs) j.push_back(finite_or_null(x));
    return j;
  };
  ctx.result("capacity_n", cap_ns);
  ctx.result("capacity_d_k", cfg.get_ints("capacity_d_k"));
  for (size_t i = 0; i < ms.size(); ++i)
    ctx.result(fmt::format("half_recall_n_{}", ms[i].key), nulls(cap.n50[i]));
  ctx.result("half_recall_n_polar_over_features", nulls(cap.n50_over_f));
  ctx.figure("capacity", line_plot_svg(pc),
             "The power map's recall cliff moves right as d_k (and its state) grows");
  return cap;
}

// The note reading the numbers, and 000 §8.2 / 004 §4.2's claims beside them.
void compare_with_document(const Config& cfg,
                           const Sweep& s,
                           const Capacity& cap,
                           std::pair<double, double> equivalence,
                           RunContext& ctx) {
  const std::vector<int64_t> ns = cfg.get_ints("n"), cap_dks = cfg.get_ints("capacity_d_k");
  const size_t last = ns.size() - 1;
  bool polar_grows = true;  // strictly increasing, none NaN
  for (size_t i = 1; i < cap.n50[2].size(); ++i)
    polar_grows = polar_grows && cap.n50[2][i] > cap.n50[2][i - 1];
  ctx.note(fmt::format(
      "At d_k = {}: softmax recalls {:.3f} of {} pairs (implied rows at {:.3f} of the uniform "
      "entropy); elu + 1 recalls {:.3f} already at n = {} and {:.3f} at n = {}, its rows at "
      "{:.3f}-{:.3f} of the uniform entropy: nearly flat, so every stored value leaks into every "
      "answer. {} recalls {:.3f} at n = {} and {:.3f} at n = {} with rows at {:.3f}-{:.3f}: "
      "sharper, but its F x d_v state still fills up. Composed readout vs nn::linear_attention "
      "for phi = elu + 1: max |difference| {:.2g} on outputs up to {:.3g}. Softmax is not "
      "free of crowding either: its margin is the logit gap sqrt(d_k) against the scores of n "
      "random keys, and at d_k = {} its recall falls through 1/2 at n = {}.",
      cfg.get_int("d_k"), s.recall[0][last], ns[last], s.entropy_ratio[0][last], s.recall[1][0],
      ns[0], s.recall[1][last], ns[last], s.entropy_ratio[1][0], s.entropy_ratio[1][last],
      s.names[2], s.recall[2][0], ns[0], s.recall[2][last], ns[last], s.entropy_ratio[2][0],
      s.entropy_ratio[2][last], equivalence.first, equivalence.second, cap_dks.front(),
      describe_n(cap.n50[0].front(), cfg.get_ints("capacity_n"), cap.softmax_recall_first)));

  DocumentComparison cmp("000 §8.2 and 004 §4.2 (PolaFormer), checked");
  cmp.add(fmt::format("softmax recall at the largest n ({})", ns[last]), 1.0, s.recall[0][last],
          0.05, "", 3);
  cmp.add_exact("elu + 1 weights flatter than softmax at every n (entropy)", "yes",
                kit::yes_no(at_every_n(s.entropy_ratio[1], s.entropy_ratio[0], std::greater<>())));
  cmp.add_exact("elu + 1 recalls less than softmax at every n", "yes",
                kit::yes_no(at_every_n(s.recall[1], s.recall[0], std::less<>())));
  cmp.add_exact("the power map lowers the entropy of elu + 1 at every n", "yes",
                kit::yes_no(at_every_n(s.entropy_ratio[2], s.entropy_ratio[1], std::less<>())));
  cmp.add_exact("the power map recalls more than elu + 1 at every n", "yes",
                kit::yes_no(at_every_n(s.recall[2], s.recall[1], std::greater<>())));
  cmp.add_exact(
      "linear attention's state has a finite capacity: the n at recall 1/2 grows "
      "with d_k (power map)",
      "yes", polar_grows ? "yes" : "no",
      polar_grows ? ""
                  : fmt::format("measured n at recall 1/2: [{}] for d_k = [{}]",
                                fmt::join(cap.n50[2], ", "), fmt::join(cap_dks, ", ")));
  // 000 §8.2 pictures the state as a finite blackboard; read as "it holds about as many pairs as
  // it has rows", the power map's state has F = 2 d_k rows. Compared as log2, within a factor 2.
  for (size_t i = 0; i < cap_dks.size(); ++i) {
    const std::string name =
        fmt::format("power map, d_k = {}: n at recall 1/2 vs state rows F = {}, log2 ratio",
                    cap_dks[i], 2 * cap_dks[i]);
    if (std::isnan(cap.n50[2][i]))
      cmp.add_exact(name, "0", "not reached", "recall did not cross 1/2 inside --capacity_n");
    else
      cmp.add(name, 0.0, std::log2(cap.n50_over_f[i]), 1.0,
              fmt::format("measured: n = {:.3g} for F = {}", cap.n50[2][i], 2 * cap_dks[i]), 2);
  }
  ctx.compare(cmp);
}

void run(const Config& cfg, RunContext& ctx) {
  for (const auto& list : {cfg.get_ints("n"), cfg.get_ints("capacity_n")})
    if (list.size() < 2 || !std::is_sorted(list.begin(), list.end()))
      throw UsageError(
          "linear-vs-softmax-recall: --n and --capacity_n need at least two "
          "increasing values");
  const std::vector<RecallMethod> ms = recall_methods(cfg.get_real("power"));
  const std::pair<double, double> equivalence = equivalence_part(cfg, ctx);
  const Sweep s = recall_part(cfg, ms, ctx);
  const Capacity cap = capacity_part(cfg, ms, ctx);
  compare_with_document(cfg, s, cap, equivalence, ctx);
  const auto rows_of = [&](size_t i) {
    return MethodRows{s.names[i], s.entropy_ratio[i], s.max_weight[i]};
  };
  compare_uniformity_and_entropy({cfg.get_ints("n"), rows_of(0), rows_of(1), rows_of(2)}, ctx);
}

}  // namespace

Experiment linear_vs_softmax_recall() {
  Experiment e;
  e.name = "linear-vs-softmax-recall";
  e.source = "000 §8.2, 004 §4.2";
  e.purpose = "Associative recall: softmax vs linear (elu+1) vs a sharper power feature map";
  e.config.add_int("d_k", 16, "key (and value) dimension", {.min = 1, .max = 512})
      .add_ints("n", {4, 8, 16, 32, 64, 128}, "numbers of stored pairs", {.min = 2, .max = 4096})
      .add_int("seeds", 10, "random draws averaged per n", {.min = 1})
      .add_real("power", 3, "p of the sharper feature map [relu(x)^p, relu(-x)^p]",
                {.min = 1, .max = 8})
      .add_real("key_norm", 0, "length of the keys (0: sqrt(d_k), entries of variance 1)",
                {.min = 0})
      .add_ints("capacity_d_k", {8, 16, 32}, "d_k values of the capacity sweep",
                {.min = 1, .max = 512})
      .add_ints("capacity_n", {4, 8, 16, 32, 64, 128, 256, 512}, "n values of the capacity sweep",
                {.min = 2, .max = 4096});
  e.quick = {{"seeds", "3"}, {"capacity_n", "4,8,16,32,64,128,256"}};
  e.run = run;
  return e;
}

}  // namespace attn::experiments
