// The toy language model behind the vocabulary part: the next token repeats the previous one with
// probability q, else it is a fresh draw from a Zipf law over V tokens (token k with weight
// 1 / (k + 1)^a, so id 0 is the most frequent, the order adaptive softmax needs). The marginal
// of this chain is the Zipf law itself, and the best possible held-out loss is known in closed
// form: H(next | prev) = sum_p z_p H((1 - q) z + q [t = p]). The model is an embedding of the
// previous token followed by one of three output layers over the V tokens.
#include "experiments/basics/softmax_vocab.h"

#include "experiments/kit/kit.h"
#include "nn/softmax_heads/adaptive_softmax.h"
#include "nn/softmax_heads/huffman_softmax.h"

namespace attn::experiments {

namespace {

struct Zipf {
  std::vector<double> p, cdf;  // probabilities, cumulative
  explicit Zipf(int64_t v, double a) {
    double total = 0;
    for (int64_t k = 0; k < v; ++k) total += std::pow(static_cast<double>(k + 1), -a);
    double acc = 0;
    for (int64_t k = 0; k < v; ++k) {
      p.push_back(std::pow(static_cast<double>(k + 1), -a) / total);
      acc += p.back();
      cdf.push_back(acc);
    }
  }
  int64_t draw(Generator& gen) const {
    const auto it = std::upper_bound(cdf.begin(), cdf.end(), gen.uniform() * cdf.back());
    return std::min<int64_t>(it - cdf.begin(), static_cast<int64_t>(p.size()) - 1);
  }
};

struct Pairs {
  Tensor prev, next;  // (N) token ids
};

Pairs draw_pairs(const Zipf& z, double q, int64_t n, Generator& gen) {
  Pairs b{Tensor({n}), Tensor({n})};
  for (int64_t i = 0; i < n; ++i) {
    const int64_t p = z.draw(gen);
    b.prev[i] = static_cast<real>(p);
    b.next[i] = static_cast<real>(gen.uniform() < q ? p : z.draw(gen));
  }
  return b;
}

// The Bayes-optimal loss (nats) of the chain: see the file comment.
double optimal_nll(const Zipf& z, double q) {
  double rest = 0;  // -sum_t (1 - q) z_t log((1 - q) z_t)
  for (double pt : z.p) rest -= (1 - q) * pt * std::log((1 - q) * pt);
  double h = 0;
  for (double pp : z.p) {
    const double self = (1 - q) * pp + q, other = (1 - q) * pp;
    h += pp * (rest + other * std::log(other) - self * std::log(self));
  }
  return h;
}

double entropy_bits(const Zipf& z) {
  double h = 0;
  for (double pt : z.p) h -= pt * std::log2(pt);
  return h;
}

enum class Head { kFull, kAdaptive, kHuffman };
const char* head_name(Head h) {
  return h == Head::kFull ? "full softmax" : h == Head::kAdaptive ? "adaptive" : "hierarchical";
}

class VocabLm : public nn::Module {
 public:
  VocabLm(Head kind,
          int64_t v,
          int64_t d,
          const Zipf& z,
          const std::vector<int64_t>& cutoffs,
          double div_value,
          Generator& gen)
      : Module("VocabLm"), kind_(kind) {
    emb = register_module("emb", std::make_shared<nn::Embedding>(v, d, gen));
    if (kind == Head::kFull)
      full = register_module("head", std::make_shared<nn::Linear>(d, v, true, gen));
    if (kind == Head::kAdaptive)
      adaptive = register_module(
          "head", std::make_shared<nn::AdaptiveLogSoftmax>(d, v, cutoffs, gen, div_value));
    if (kind == Head::kHuffman)
      huffman = register_module("head", std::make_shared<nn::HuffmanSoftmax>(d, z.p, gen));
  }
  // prev (N), next (N) -> mean -log p(next | prev), nats
  Var loss(const Tensor& prev, const Tensor& next) const {
    const Var h = emb->forward(prev);
    if (kind_ == Head::kFull) return cross_entropy(full->forward(h), next);
    if (kind_ == Head::kAdaptive) return adaptive->loss(h, next);
    return huffman->loss(h, next);
  }
  std::shared_ptr<nn::Embedding> emb;
  std::shared_ptr<nn::Linear> full;
  std::shared_ptr<nn::AdaptiveLogSoftmax> adaptive;
  std::shared_ptr<nn::HuffmanSoftmax> huffman;

 private:
  Head kind_;
};

// The held-out pairs, drawn in chunks of at most 512 (one evaluation batch each).
std::vector<Pairs> draw_heldout(const Zipf& z, double q, int64_t n, Generator& gen) {
  std::vector<Pairs> chunks;
  for (int64_t s = 0; s < n; s += 512)
    chunks.push_back(draw_pairs(z, q, std::min<int64_t>(512, n - s), gen));
  return chunks;
}

double heldout_nll(const VocabLm& m, const std::vector<Pairs>& held) {
  NoGrad off;
  double total = 0, count = 0;
  for (const Pairs& b : held) {
    const auto n = static_cast<double>(b.prev.numel());
    total += static_cast<double>(m.loss(b.prev, b.next).value().item()) * n;
    count += n;
  }
  return total / count;
}

// One vocabulary size: the three heads trained alike, then timed against each other.
struct VocabRow {
  int64_t v = 0;
  double log2_v = 0, entropy = 0, avg_depth = 0, max_depth = 0;
  double ppl_optimal = 0, ppl_unigram = 0;
  double ppl[3] = {0, 0, 0}, us_per_token[3] = {0, 0, 0};
  double macs[3] = {0, 0, 0};  // multiply-adds of the output layer's forward, per token
};

// Expected forward multiply-adds per token of each head on the Zipf marginal: full V d; adaptive
// (c0 + clusters) d for the head, plus for a token of cluster i (probability P_i) d h_i + h_i
// size_i; hierarchical d per decision on the path.
void count_macs(VocabRow& row, const Zipf& z, const nn::AdaptiveLogSoftmax& a, double d) {
  row.macs[0] = static_cast<double>(row.v) * d;
  row.macs[1] = static_cast<double>(a.head->out_features()) * d;
  for (size_t i = 0; i < a.clusters(); ++i) {
    double p = 0;
    for (int64_t t = a.cluster_start(i); t < a.cluster_end(i); ++t)
      p += z.p[static_cast<size_t>(t)];
    const auto hidden = static_cast<double>(a.tail(i).proj->out_features());
    row.macs[1] += p * hidden * (d + static_cast<double>(a.cluster_end(i) - a.cluster_start(i)));
  }
  row.macs[2] = row.avg_depth * d;
}

std::vector<int64_t> cutoffs_for(const Config& cfg, int64_t v) {
  const auto c0 = std::max<int64_t>(1, static_cast<int64_t>(cfg.get_real("shortlist_frac") * v));
  const auto c1 = std::max<int64_t>(c0 + 1, static_cast<int64_t>(cfg.get_real("cluster_frac") * v));
  if (c1 >= v) return {c0};
  return {c0, c1};
}

VocabRow run_vocab(const Config& cfg, RunContext& ctx, int64_t v) {
  const double q = cfg.get_real("repeat_prob"), a = cfg.get_real("zipf_exponent");
  const int64_t d = read_model(cfg).d_model;
  const Zipf z(v, a);
  VocabRow row;
  row.v = v;
  row.log2_v = std::log2(static_cast<double>(v));
  row.entropy = entropy_bits(z);
  row.ppl_optimal = std::exp(optimal_nll(z, q));
  row.ppl_unigram = std::exp(row.entropy * std::log(2.0));
  Generator held_gen(ctx.seed() * 7919 + static_cast<uint64_t>(v));
  const std::vector<Pairs> held = draw_heldout(z, q, cfg.get_int("eval_size"), held_gen);
  std::vector<std::unique_ptr<VocabLm>> models;
  for (Head h : {Head::kFull, Head::kAdaptive, Head::kHuffman}) {
    Generator init(ctx.seed()), data(ctx.seed() * 31 + static_cast<uint64_t>(v));
    auto m =
        std::make_unique<VocabLm>(h, v, d, z, cutoffs_for(cfg, v), cfg.get_real("div_value"), init);
    train::FitSettings s =
        kit::fit_settings(ctx, fmt::format("{} V={}", head_name(h), v), read_optimizer(cfg));
    train::fit(*m, s, [&](const train::BatchPart& part) {
      const Pairs b = draw_pairs(z, q, s.batch_size, data);
      return train::StepLoss{m->loss(part.rows(b.prev), part.rows(b.next))};
    });
    row.ppl[static_cast<int>(h)] = std::exp(heldout_nll(*m, held));
    if (h == Head::kHuffman) {
      for (int64_t t = 0; t < v; ++t)
        row.avg_depth += z.p[static_cast<size_t>(t)] * static_cast<double>(m->huffman->depth(t));
      row.max_depth = static_cast<double>(m->huffman->max_depth());
    }
    models.push_back(std::move(m));
  }
  count_macs(row, z, *models[1]->adaptive, static_cast<double>(d));
  // Time per token of one training step's forward and backward, the heads in alternation; the
  // fastest round of each (the least disturbed by other processes on a shared machine).
  Generator tgen(ctx.seed() + 5);
  const Pairs b = draw_pairs(z, q, read_optimizer(cfg).batch_size, tgen);
  std::vector<std::function<void()>> works;
  for (const auto& m : models)
    works.push_back([&m, &b] {
      m->loss(b.prev, b.next).backward();
      m->zero_grad();
    });
  const std::vector<Timing> t =
      time_interleaved(works, static_cast<int>(cfg.get_int("time_reps")), 3.0);
  for (int h = 0; h < 3; ++h)
    row.us_per_token[h] =
        1e6 * t[static_cast<size_t>(h)].min_s / static_cast<double>(b.prev.numel());
  return row;
}

}  // namespace

void add_vocab_fields(Config& c) {
  c.add_ints("vocab_sizes", {500, 2000, 8000}, "vocabulary sizes V of the toy language model",
             {.min = 4, .max = 100000});
  c.add_real("zipf_exponent", 1.0, "Zipf exponent a: token k has weight 1/(k+1)^a",
             {.min = 0.1, .max = 4});
  c.add_real("repeat_prob", 0.3, "probability that the next token repeats the previous one",
             {.min = 0, .max = 0.99});
  c.add_real("shortlist_frac", 0.05, "adaptive softmax: share of V in the head's shortlist",
             {.min = 1e-4, .max = 0.9});
  c.add_real("cluster_frac", 0.25, "adaptive softmax: end of the first tail cluster (share of V)",
             {.min = 1e-4, .max = 1});
  c.add_real("div_value", 2.0, "adaptive softmax: each cluster's projection is d / div^(i+1)",
             {.min = 1, .max = 16});
  c.add_int("time_reps", 10, "timed rounds of a training step per head", {.min = 3, .max = 1000});
  add_model_fields(c, {.d_model = 32});
  add_optimizer_fields(c, {.steps = 400, .batch_size = 256, .lr = 1e-2});
  add_eval_fields(c, {.eval_size = 4096});
}

namespace {

void report_rows(RunContext& ctx, const std::vector<VocabRow>& rows) {
  Table cost("Hierarchical softmax: binary decisions per token (Huffman tree, Zipf frequencies)",
             {"V", "log2 V", "entropy H (bits)", "average depth", "max depth"});
  Table macs(
      "Forward multiply-adds of the output layer per token (expected under the Zipf law)",
      {"V", "full softmax", "adaptive", "hierarchical", "full / adaptive", "full / hierarchical"});
  Table ppl("Held-out perplexity after the same training (lower is better)",
            {"V", "full softmax", "adaptive", "hierarchical", "best possible", "unigram"});
  Table time(
      "Time per token of a training step (forward + backward), the fastest of the rounds, "
      "the heads in alternation",
      {"V", "full softmax (us)", "adaptive (us)", "hierarchical (us)", "full / adaptive",
       "full / hierarchical"});
  for (const VocabRow& r : rows) {
    cost.add_row({std::to_string(r.v), fixed(r.log2_v, 2), fixed(r.entropy, 2),
                  fixed(r.avg_depth, 2), fixed(r.max_depth, 0)});
    macs.add_row({std::to_string(r.v), fixed(r.macs[0], 0), fixed(r.macs[1], 0),
                  fixed(r.macs[2], 0), fixed(r.macs[0] / r.macs[1], 1),
                  fixed(r.macs[0] / r.macs[2], 1)});
    ppl.add_row({std::to_string(r.v), fixed(r.ppl[0], 1), fixed(r.ppl[1], 1), fixed(r.ppl[2], 1),
                 fixed(r.ppl_optimal, 1), fixed(r.ppl_unigram, 1)});
    time.add_row({std::to_string(r.v), fixed(r.us_per_token[0], 2), fixed(r.us_per_token[1], 2),
                  fixed(r.us_per_token[2], 2), fixed(r.us_per_token[0] / r.us_per_token[1], 2),
                  fixed(r.us_per_token[0] / r.us_per_token[2], 2)});
  }
  ctx.table(cost);
  ctx.table(macs);
  ctx.table(ppl);
  ctx.table(time);
}

// Head k's value of a per-head field, and the full softmax's value over head k's, by row.
using PerHead = double (VocabRow::*)[3];
std::vector<double> of_head(const std::vector<VocabRow>& rows, PerHead field, int k) {
  return kit::column(rows, [&](const VocabRow& r) { return (r.*field)[k]; });
}
std::vector<double> full_over(const std::vector<VocabRow>& rows, PerHead field, int k) {
  return kit::column(rows, [&](const VocabRow& r) { return (r.*field)[0] / (r.*field)[k]; });
}

void report_figures(RunContext& ctx, const std::vector<VocabRow>& rows) {
  const std::vector<double> vs = kit::column(rows, &VocabRow::v);
  LinePlot t = kit::line_plot("Time per token of a training step", "vocabulary size V",
                              "microseconds per token", kit::Axes::kLogLog);
  LinePlot p =
      kit::line_plot("Held-out perplexity", "vocabulary size V", "perplexity", kit::Axes::kLogLog);
  for (Head h : {Head::kFull, Head::kAdaptive, Head::kHuffman}) {
    t.series.push_back(
        {head_name(h), vs, of_head(rows, &VocabRow::us_per_token, static_cast<int>(h))});
    p.series.push_back({head_name(h), vs, of_head(rows, &VocabRow::ppl, static_cast<int>(h))});
  }
  p.series.push_back({"best possible", vs, kit::column(rows, &VocabRow::ppl_optimal), "", true});
  ctx.figure("time_per_token", line_plot_svg(t), "Cost of the output layer against V");
  ctx.figure("perplexity", line_plot_svg(p), "Same model, same training, three output layers");
  LinePlot d = kit::line_plot("Hierarchical softmax: decisions per token", "vocabulary size V",
                              "binary decisions", kit::Axes::kLogX);
  d.series = {{"Huffman tree, average", vs, kit::column(rows, &VocabRow::avg_depth)},
              {"log2 V (a balanced tree)", vs, kit::column(rows, &VocabRow::log2_v), "", true}};
  ctx.figure("decisions", line_plot_svg(d), "A Huffman tree puts frequent tokens near the root");
}

}  // namespace

void vocab_part(const Config& cfg, RunContext& ctx, DocumentComparison& cmp) {
  ctx.section("3. Hierarchical and adaptive softmax over a Zipf vocabulary");
  std::vector<VocabRow> rows;
  for (int64_t v : cfg.get_ints("vocab_sizes")) rows.push_back(run_vocab(cfg, ctx, v));
  report_rows(ctx, rows);
  report_figures(ctx, rows);
  const std::vector<double> ratio_adaptive = full_over(rows, &VocabRow::us_per_token, 1),
                            ratio_huffman = full_over(rows, &VocabRow::us_per_token, 2);
  kit::record(ctx, {{"vocab_sizes", kit::column(rows, &VocabRow::v)},
                    {"huffman_avg_depth", kit::column(rows, &VocabRow::avg_depth)},
                    {"huffman_entropy_bits", kit::column(rows, &VocabRow::entropy)},
                    {"ppl_full", of_head(rows, &VocabRow::ppl, 0)},
                    {"ppl_adaptive", of_head(rows, &VocabRow::ppl, 1)},
                    {"ppl_hierarchical", of_head(rows, &VocabRow::ppl, 2)},
                    {"mac_ratio_adaptive", full_over(rows, &VocabRow::macs, 1)},
                    {"mac_ratio_hierarchical", full_over(rows, &VocabRow::macs, 2)},
                    {"speedup_adaptive", ratio_adaptive},
                    {"speedup_hierarchical", ratio_huffman}});
  const bool under_log2 = std::all_of(rows.begin(), rows.end(),
                                      [](const VocabRow& r) { return r.avg_depth <= r.log2_v; });
  const VocabRow& top = rows.back();
  cmp.add_exact(
      "2.4: hierarchical softmax needs about log2 V binary decisions per token "
      "(Huffman average at most log2 V, every V)",
      "yes", kit::yes_no(under_log2),
      fmt::format("at V = {}: {:.2f} on average against log2 V = {:.2f} (max depth {:.0f})", top.v,
                  top.avg_depth, top.log2_v, top.max_depth));
  cmp.add_exact(
      fmt::format("2.4: hierarchical softmax cheaper per token than full softmax (V = {})", top.v),
      "yes", kit::yes_no(ratio_huffman.back() > 1),
      fmt::format("full / hierarchical time {:.2f}", ratio_huffman.back()));
  cmp.add_exact(
      fmt::format("2.4: adaptive softmax cheaper per token than full softmax (V = {})", top.v),
      "yes", kit::yes_no(ratio_adaptive.back() > 1),
      fmt::format("full / adaptive time {:.2f}", ratio_adaptive.back()));
}

}  // namespace attn::experiments
