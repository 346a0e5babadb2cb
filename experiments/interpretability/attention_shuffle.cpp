// attention-shuffle [000 §X "Attention ≠ Explanation", after Jain & Wallace 2019]: do a trained
// model's attention weights explain its answers? Replace the weights of one attention layer and
// see what changes.
//
//   attnlab run attention-shuffle                          # ~1 min on 2 cores
//   attnlab run attention-shuffle --attention decoder_self --adv_lambda 0.3
//
// The model is the reversal experiment's, trained until held-out exact match reaches --target.
// Then, one layer at a time, every row of that layer's attention weights (every head, every
// query, during greedy decoding of the held-out set) is replaced through
// MultiheadAttention::set_weights_hook by
//   permute      the same weights on randomly shuffled keys;
//   uniform      1/n on each visible key;
//   adversarial  the result of gradient steps on the row's logits that keep the head output
//                a V close to the original while pushing a away from the original row
//                (experiments/common/row_interventions.h), started from the permuted row.
// For each: held-out exact match, and per row the total-variation and Jensen-Shannon distance
// from the original and the relative change of the head output |(a - a0) V| / |a0 V|.
// Step through: the hook in MultiheadAttention::split_heads_attention, then adversarial_row.
#include "autograd/var.h"
#include "experiments/common/head_roles.h"
#include "experiments/common/row_interventions.h"
#include "experiments/common/trained_run.h"
#include "experiments/kit/kit.h"
#include "experiments/kit/trained_model_report.h"
#include "nn/transformer/seq2seq.h"

namespace attn::experiments {

namespace {

enum class Intervention { kPermute, kUniform, kAdversarial };
constexpr Intervention kInterventions[] = {Intervention::kPermute, Intervention::kUniform,
                                           Intervention::kAdversarial};
std::string intervention_name(Intervention i) {
  return i == Intervention::kPermute   ? "permute"
         : i == Intervention::kUniform ? "uniform"
                                       : "adversarial";
}

// What the hook measured over every row it replaced.
struct RowTotals {
  int64_t rows = 0;
  double tv = 0, js = 0, output_change = 0;
  int64_t output_close = 0;  // rows whose head output moved by less than `close`
  std::vector<double> first_original, first_new;  // the first row of head 1, for the figure
};

// The hook: every row of w (B,H,Tq,Tk) replaced by the intervention, with its values v
// (B,H,Tk,D).
Var replace_rows(const Var& weights,
                 const Var& values,
                 Intervention kind,
                 const AdversarialOptions& adv,
                 double close,
                 Generator& gen,
                 RowTotals& totals) {
  const Tensor& w = weights.value();
  const Tensor& v = values.value();
  const int64_t b = w.size(0), h = w.size(1), tq = w.size(2), tk = w.size(3), d = v.size(3);
  Tensor out = Tensor::empty(w.shape());
  std::vector<double> a0(static_cast<size_t>(tk)), vals(static_cast<size_t>(tk * d));
  for (int64_t bh = 0; bh < b * h; ++bh) {
    for (int64_t i = 0; i < tk * d; ++i) vals[static_cast<size_t>(i)] = v[bh * tk * d + i];
    for (int64_t q = 0; q < tq; ++q) {
      const int64_t row = (bh * tq + q) * tk;
      for (int64_t j = 0; j < tk; ++j) a0[static_cast<size_t>(j)] = w[row + j];
      std::vector<double> a;
      if (kind == Intervention::kUniform)
        a = uniform_row(a0);
      else if (kind == Intervention::kPermute)
        a = permuted_row(a0, gen);
      else
        a = adversarial_row(a0, vals, d, permuted_row(a0, gen), adv);
      const double moved = relative_output_change(a0, a, vals, d);
      ++totals.rows;
      totals.tv += total_variation(a0, a);
      totals.js += js_divergence(a0, a);
      totals.output_change += moved;
      totals.output_close += moved < close;
      if (totals.first_original.empty() && bh % h == 0)
        totals.first_original = a0, totals.first_new = a;
      for (int64_t j = 0; j < tk; ++j) out[row + j] = static_cast<real>(a[static_cast<size_t>(j)]);
    }
  }
  return Var::constant(out);
}

struct Outcome {
  Intervention kind;
  int64_t layer;
  double exact = 0;
  RowTotals totals;
  double mean(double RowTotals::*field) const {
    return totals.rows ? totals.*field / static_cast<double>(totals.rows) : 0;
  }
  double close_fraction() const {
    return totals.rows ? static_cast<double>(totals.output_close) / static_cast<double>(totals.rows)
                       : 0;
  }
};

AttentionKind parse_kind(const std::string& s) {
  for (AttentionKind k : kAttentionKinds)
    if (kind_name(k) == s) return k;
  throw UsageError("attention-shuffle: unknown --attention " + s);
}

void figures(const std::vector<Outcome>& outcomes,
             double baseline,
             int64_t layers,
             RunContext& ctx) {
  BarChart acc{.title = fmt::format("Held-out exact match (intact {:.3f})", baseline),
               .y_label = "exact match",
               .y_max = 1};
  for (int64_t l = 0; l < layers; ++l) acc.labels.push_back(fmt::format("layer {}", l + 1));
  for (Intervention i : kInterventions) {
    BarSeries s{intervention_name(i), {}, ""};
    for (const auto& o : outcomes)
      if (o.kind == i) s.values.push_back(o.exact);
    acc.series.push_back(s);
  }
  ctx.figure("exact_match", bar_chart_svg(acc),
             "Exact match with one layer's attention rows replaced, per intervention");
  // One row (layer 1, head 1, the first decoding step of the first held-out batch) before and
  // after each intervention.
  std::vector<BarChart> panels;
  for (const auto& o : outcomes) {
    if (o.layer != 0 || o.totals.first_original.empty()) continue;
    panels.push_back(
        {.labels = index_labels(static_cast<int64_t>(o.totals.first_new.size())),
         .series = {{"original", o.totals.first_original, ""},
                    {"replaced", o.totals.first_new, ""}},
         .title = fmt::format("{}: TV {:.2f} from the original", intervention_name(o.kind),
                              total_variation(o.totals.first_original, o.totals.first_new)),
         .x_label = "key (source position)"});
  }
  ctx.figure("rows",
             bar_panels_svg(panels, "One attention row (layer 1, head 1) and its replacements"),
             "The original row and what each intervention put in its place");
}

// The document's claims against the best case over the layers.
void compare_with_document(const Config& cfg,
                           AttentionKind kind,
                           const std::vector<Outcome>& outcomes,
                           double baseline,
                           RunContext& ctx) {
  const double small = cfg.get_real("small_drop"), far = cfg.get_real("far_tv");
  auto best = [&](Intervention kind) {  // the first layer with the highest exact match
    const Outcome* b = nullptr;
    for (const auto& o : outcomes)
      if (o.kind == kind && (!b || o.exact > b->exact)) b = &o;
    return b;
  };
  const Outcome *best_perm = best(Intervention::kPermute),
                *best_adv = best(Intervention::kAdversarial);
  ctx.result("best_permute_exact_match", best_perm->exact);
  ctx.result("best_adversarial_exact_match", best_adv->exact);
  ctx.result("best_adversarial_tv", best_adv->mean(&RowTotals::tv));
  ctx.result("best_adversarial_output_change", best_adv->mean(&RowTotals::output_change));
  DocumentComparison cmp(
      fmt::format("000 §X vs ours ({}; 'little' = exact match drops by less "
                  "than {:.2f})",
                  kind_title(kind), small));
  cmp.add_exact(
      "shuffling the attention weights leaves the answers nearly unchanged (sometimes)", "yes",
      kit::yes_no(baseline - best_perm->exact < small),
      fmt::format("best layer {}: exact match {:.3f} (intact {:.3f}); mean output change {:.3f}",
                  best_perm->layer + 1, best_perm->exact, baseline,
                  best_perm->mean(&RowTotals::output_change)));
  cmp.add_exact(
      fmt::format("a very different row (mean TV >= {:.2f}) gives nearly the same answers "
                  "(Jain & Wallace's adversarial attention)",
                  far),
      "yes",
      kit::yes_no(best_adv->mean(&RowTotals::tv) >= far && baseline - best_adv->exact < small),
      fmt::format("layer {}: mean TV {:.3f}, JS {:.3f}, output change {:.3f}, exact match {:.3f}",
                  best_adv->layer + 1, best_adv->mean(&RowTotals::tv),
                  best_adv->mean(&RowTotals::js), best_adv->mean(&RowTotals::output_change),
                  best_adv->exact));
  ctx.compare(cmp);
}

void run(const Config& cfg, RunContext& ctx) {
  const AttentionKind kind = parse_kind(cfg.get_string("attention"));
  ctx.section("Training the reversal model (train/run)");
  TrainedRun run = train_for_experiment(reversal_train_config(cfg, ctx.seed()), ctx, "train");
  ctx.preformatted(kit::stop_line(run.summary));
  const auto set = kit::first_examples(run.setup.heldout_set, cfg.get_int("examples"));
  const double baseline = exact_match(*run.summary.model, set);
  ctx.result("baseline_exact_match", baseline);
  ctx.result("train_seconds", run.summary.result.wall_seconds);

  auto& model = dynamic_cast<nn::Seq2SeqTransformer&>(run.summary.model->module());
  const auto modules = attention_modules(model, kind);
  const AdversarialOptions adv{.steps = static_cast<int>(cfg.get_int("adv_steps")),
                               .lr = cfg.get_real("adv_lr"),
                               .lambda = cfg.get_real("adv_lambda")};
  const double close = cfg.get_real("close");
  Generator gen(ctx.seed() * 7919 + 5);
  ctx.section(fmt::format("Replacing the {} rows, one layer at a time, on {} held-out sequences",
                          kind_title(kind), set.size()));
  std::vector<Outcome> outcomes;
  for (size_t l = 0; l < modules.size(); ++l)
    for (Intervention i : kInterventions) {
      Outcome o{i, static_cast<int64_t>(l)};
      modules[l]->set_weights_hook([&](const Var& w, const Var& v) {
        return replace_rows(w, v, i, adv, close, gen, o.totals);
      });
      o.exact = exact_match(*run.summary.model, set);
      modules[l]->set_weights_hook(nullptr);
      outcomes.push_back(std::move(o));
    }
  Table t(fmt::format("Intact exact match {:.3f}; means over every replaced row", baseline),
          {"layer", "intervention", "exact match", "change", "TV distance", "JS divergence",
           "output change", fmt::format("rows with output change < {:.2f}", close)});
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& o : outcomes) {
    t.add_row({std::to_string(o.layer + 1), intervention_name(o.kind), fixed(o.exact, 3),
               fixed(o.exact - baseline, 3), fixed(o.mean(&RowTotals::tv), 3),
               fixed(o.mean(&RowTotals::js), 3), fixed(o.mean(&RowTotals::output_change), 3),
               fixed(o.close_fraction(), 3)});
    rows.push_back({{"layer", o.layer + 1},
                    {"intervention", intervention_name(o.kind)},
                    {"exact_match", o.exact},
                    {"rows", o.totals.rows},
                    {"tv", o.mean(&RowTotals::tv)},
                    {"js", o.mean(&RowTotals::js)},
                    {"output_change", o.mean(&RowTotals::output_change)},
                    {"output_close_fraction", o.close_fraction()}});
  }
  ctx.table(t);
  ctx.note(fmt::format(
      "TV = half the L1 distance between the rows (0 same, 1 disjoint); JS in nats (at most "
      "{:.3f}); output change = |(a - a0) V| / |a0 V| for the head's values V. The adversarial "
      "rows come from {} gradient steps (step {}, push weight {}) started at the permuted row.",
      std::log(2.0), adv.steps, adv.lr, adv.lambda));
  ctx.result("outcomes", rows);
  ctx.result("exact_match_after_hooks", exact_match(*run.summary.model, set));
  figures(outcomes, baseline, static_cast<int64_t>(modules.size()), ctx);

  compare_with_document(cfg, kind, outcomes, baseline, ctx);
}

}  // namespace

Experiment attention_shuffle() {
  Experiment e;
  e.name = "attention-shuffle";
  e.source = "000 §X (Jain & Wallace)";
  e.purpose = "Permute, flatten or adversarially replace trained attention rows; what changes";
  add_reversal_fields(e.config)
      .add_string("attention", "cross", "which attention to intervene on",
                  {"encoder_self", "decoder_self", "cross"})
      .add_int("examples", 200, "held-out sequences scored per intervention", {.min = 1})
      .add_int("adv_steps", 100, "gradient steps of the adversarial search per row", {.min = 0})
      .add_real("adv_lr", 1.0, "step size of the adversarial search", {.min = 0})
      .add_real("adv_lambda", 0.1, "weight of the push away from the original row", {.min = 0})
      .add_real("close", 0.1, "a row's output change below this counts as 'nearly the same'",
                {.min = 0})
      .add_real("small_drop", 0.1, "an exact-match drop below this counts as 'little'", {.min = 0})
      .add_real("far_tv", 0.3, "mean TV distance that counts as 'a very different row'",
                {.min = 0, .max = 1})
      .add_int("seed", 1, "random seed (weights, data, held-out set, permutations)", {.min = 0});
  e.quick = {{"d_model", "32"},     {"nhead", "4"},     {"dim_ff", "128"},
             {"steps", "300"},      {"warmup", "30"},   {"eval_size", "60"},
             {"eval_every", "300"}, {"examples", "40"}, {"adv_steps", "30"}};
  e.check = [](const Config& c) {
    require_divides(c, "nhead", "d_model");
    train::validate_train_config(reversal_train_config(c, 0));
  };
  e.run = run;
  return e;
}

}  // namespace attn::experiments
