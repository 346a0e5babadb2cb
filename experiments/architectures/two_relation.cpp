// two-relation [002 §39.7.1]: why more than one head. Two target attention maps that no single
// bilinear form can produce at once — "look at position 2" and "look at the planted [1,0] token"
// — trained with one head (one map must serve both targets) and with two heads (one map each).
//
//   attnlab run two-relation                       # the document's settings, then the study
//   attnlab run two-relation --position-code binary --long-iters 4000 --seeds 5
//
// The document prints 1-head 0.3505 and 2-head 0.3196 after 400 Adam steps and says two heads
// drive the loss to near zero. This run reproduces the setting, then trains longer over several
// seeds to test that claim, and separates the two terms of the loss to show why it fails:
//  - the document's position code (the first two columns of a 4x4 identity) gives positions 2
//    and 3 the same code [0,0], so no head can tell them apart: the position term has a floor
//    of 0.125 (a row split 1/2-1/2 between keys 2 and 3 scores ((1/2)^2 + (1/2)^2) / 4). A
//    binary position code removes that floor;
//  - the content target needs "the key equal to [1,0]", but a bilinear score is linear in the
//    key's content, so Gaussian keys further along the preferred direction always outscore the
//    planted one: no single head can reach zero on that term, with either code.
#include "data/tasks/two_relation.h"
#include "experiments/kit/kit.h"
#include "experiments/kit/trained_model_report.h"

namespace attn::experiments {

namespace {

// Query/key projections of an attention layer over d-dimensional tokens with `heads` heads
// (value and output projections do not influence the attention maps being trained, so they are
// left out: with them, Adam would skip them anyway as they receive no gradient).
class AttentionMaps : public nn::Module {
 public:
  AttentionMaps(int64_t d, int64_t heads, Generator& gen) : Module("AttentionMaps"), heads(heads) {
    wq = register_module("wq", std::make_shared<nn::Linear>(d, d, false, gen));
    wk = register_module("wk", std::make_shared<nn::Linear>(d, d, false, gen));
  }

  // x (B,T,d) -> attention weights (B,heads,T,T) = softmax(Q_h K_h^T / sqrt(d_k)).
  Var weights(const Var& x) const {
    Var q = nn::split_heads(wq->forward(x), heads);
    Var k = nn::split_heads(wk->forward(x), heads);
    const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
    return softmax(mul_scalar(matmul(q, k, false, true), static_cast<real>(scale)));
  }

  int64_t heads;
  std::shared_ptr<nn::Linear> wq, wk;
};

// The loss of the document: one head is compared with both targets; with two heads, head 0 with
// the position target and head 1 with the content target. Also returns the two terms.
struct Losses {
  Var total;
  double position = 0, content = 0;
};

Losses two_relation_loss(const Var& weights, const data::TwoRelationBatch& b) {
  const int64_t batch = weights.size(0), t = weights.size(-1);
  Var tp = Var::constant(b.target_position), tc = Var::constant(b.target_content);
  Var head_pos = reshape(slice(weights, 1, 0, 1), {batch, t, t});
  Var head_content =
      weights.size(1) > 1 ? reshape(slice(weights, 1, 1, 2), {batch, t, t}) : head_pos;
  Var lp = mse_loss(head_pos, tp), lc = mse_loss(head_content, tc);
  return {add(lp, lc), lp.item(), lc.item()};
}

// The loss of one batch of 32 random sequences is noisy, so every comparison reads the mean over
// the last 10% of the steps (at least one step) instead of the final step alone.
constexpr double kTailFraction = 0.1;
// "Near zero" for the document's claim about two heads: below this total loss.
constexpr double kNearZero = 0.05;
// The losses the document prints after 400 steps, one head and two heads.
constexpr double kDocOneHead = 0.3505, kDocTwoHeads = 0.3196;

size_t tail_length(size_t steps) {
  const auto n = static_cast<size_t>(std::ceil(kTailFraction * static_cast<double>(steps)));
  return std::clamp<size_t>(n, 1, std::max<size_t>(steps, 1));
}

// The mean and sample standard deviation of the tail's per-batch losses (sd 0 for a tail of one).
kit::Spread tail(const std::vector<double>& xs) {
  return kit::spread_of({xs.end() - static_cast<std::ptrdiff_t>(tail_length(xs.size())), xs.end()});
}

struct Curve {
  std::vector<double> total, position, content;
  double tail_total() const { return tail(total).mean; }
  double tail_position() const { return tail(position).mean; }
  double tail_content() const { return tail(content).mean; }
  double tail_total_sd() const { return tail(total).sd; }
};

Curve train(int64_t heads,
            const data::TwoRelationTask& task,
            int64_t iters,
            int64_t batch,
            double lr,
            uint64_t seed) {
  Generator gen(seed);
  AttentionMaps model(task.feature_dims(), heads, gen);
  train::FitSettings s;
  s.name = fmt::format("{} head{} seed {}", heads, heads == 1 ? "" : "s", seed);
  s.steps = iters;
  s.optimizer.lr = lr;  // Adam, constant rate
  s.not_data_parallel =
      "every step records the two loss terms of the whole batch (the curves of the study)";
  Curve c;
  const train::TrainResult r = train::fit(model, s, [&](const train::BatchPart&) {
    const data::TwoRelationBatch b = task.sample(batch, gen);
    Losses l = two_relation_loss(model.weights(Var::constant(b.x)), b);
    c.position.push_back(l.position);
    c.content.push_back(l.content);
    return train::StepLoss{l.total};
  });
  c.total = r.losses;
  return c;
}

data::TwoRelationTask make_task(const std::string& code) {
  data::TwoRelationTask::Config tc;
  tc.position_code = code == "binary" ? data::PositionCode::kBinary : data::PositionCode::kDocument;
  return data::TwoRelationTask(tc);
}

// The positions whose position code equals the target position's, read from a sampled sequence
// (the code columns follow the content columns and do not depend on the draw).
std::vector<int64_t> positions_sharing_target_code(const data::TwoRelationTask& task) {
  const auto& tc = task.config();
  Generator gen(0);
  const Tensor x = task.sample(1, gen).x;  // (1, T, C + P)
  const int64_t width = tc.content_dims + tc.position_dims;
  auto same = [&](int64_t p) {
    for (int64_t j = tc.content_dims; j < width; ++j)
      if (x[p * width + j] != x[tc.target_position * width + j]) return false;
    return true;
  };
  std::vector<int64_t> shared;
  for (int64_t p = 0; p < tc.seq_len; ++p)
    if (same(p)) shared.push_back(p);
  return shared;
}

// The least position term any head can reach when the target key shares its code with m - 1
// others: position is all the target depends on, so the best row spreads 1/m over the m keys and
// scores ((1 - 1/m)^2 + (m - 1) / m^2) / T = (1 - 1/m) / T, mse averaging over the T entries of a
// row (the same for every row). With a distinct code for every position (m = 1) it is 0.
double position_floor(const data::TwoRelationTask& task) {
  const auto m = static_cast<double>(positions_sharing_target_code(task).size());
  return (1 - 1 / m) / static_cast<double>(task.config().seq_len);
}

// The loss of the compromise the document describes for one head: the average of the two
// targets, W = (P + C) / 2, which is also the best single map for the sum of the two MSE terms
// (the minimiser of |W - P|^2 + |W - C|^2). Its loss is |P - C|^2 / 2 averaged, read from
// `batches` sampled batches: it depends on how often the planted key is the target position.
double average_map_loss(const data::TwoRelationTask& task, int64_t batch, uint64_t seed) {
  Generator gen(seed);
  const int batches = 200;
  double total = 0;
  for (int i = 0; i < batches; ++i) {
    const data::TwoRelationBatch b = task.sample(batch, gen);
    double ss = 0;
    for (int64_t j = 0; j < b.target_position.numel(); ++j) {
      const double d = b.target_position[j] - b.target_content[j];
      ss += d * d / 2;  // (W - P)^2 + (W - C)^2 with W = (P + C) / 2
    }
    total += ss / static_cast<double>(b.target_position.numel());
  }
  return total / batches;
}

// The longer study for one position code: per seed, the tail means of one head and of two heads
// (total and its two terms).
struct Study {
  std::vector<double> one_total, two_total, two_position, two_content;
  Curve first_two_heads;  // the first seed's two-head curve, for the figure
};

// The settings every part shares.
struct Settings {
  int64_t iters, batch, long_iters, seeds;
  double lr;
  uint64_t seed;
};

// ---- 1. the document's setting: one and two heads, the loss against the printed values ----
void document_setting(const Config& cfg,
                      const Settings& w,
                      RunContext& ctx,
                      DocumentComparison& cmp) {
  const size_t tail = tail_length(static_cast<size_t>(w.iters));
  const auto task = make_task(cfg.get_string("position_code"));
  ctx.section(fmt::format("The document's setting: T={}, d={}, Adam {}, batch {}, {} position code",
                          task.config().seq_len, task.feature_dims(), w.lr, w.batch,
                          cfg.get_string("position_code")));
  const Curve one = train(1, task, w.iters, w.batch, w.lr, w.seed);
  const Curve two = train(2, task, w.iters, w.batch, w.lr, w.seed);
  Table t(fmt::format("Loss after {} iterations (tail = the last {} iterations)", w.iters, tail),
          {"model", "last iteration", "tail mean", "position term (tail)", "content term (tail)"});
  for (const auto& [name, c] : {std::pair{"1 head", &one}, std::pair{"2 heads", &two}})
    t.add_row({name, fixed(c->total.back(), 4), fixed(c->tail_total(), 4),
               fixed(c->tail_position(), 4), fixed(c->tail_content(), 4)});
  ctx.table(t);
  kit::record(ctx, {{"tail_steps", tail},
                    {"one_head_final_loss", one.total.back()},
                    {"two_head_final_loss", two.total.back()},
                    {"one_head_tail_mean", one.tail_total()},
                    {"two_head_tail_mean", two.tail_total()}});
  LinePlot p = kit::line_plot("Joint MSE loss, the document's setting", "iteration", "loss");
  p.series = {kit::step_series("1 head", one.total), kit::step_series("2 heads", two.total)};
  ctx.figure("loss_document_setting", line_plot_svg(p),
             fmt::format("One head vs two heads, {} iterations", w.iters));
  CsvWriter csv = ctx.csv("metrics", {"iteration", "one_head", "two_heads"});
  for (size_t i = 0; i < one.total.size(); ++i)
    csv.row({static_cast<double>(i + 1), one.total[i], two.total[i]});

  // The document prints the loss of its final batch, drawn from PyTorch's generator: only the
  // level should agree, not the digits. Ours is the tail mean. The rows are there to tell the
  // two printed values apart, so the tolerance is half their gap: within it, ours is nearer its
  // own value than the other one (a wider tolerance would let either row accept either value).
  const double tolerance = std::fabs(kDocOneHead - kDocTwoHeads) / 2;
  const std::string why = fmt::format(
      "ours: mean of the last {} iterations; the document: its final batch, PyTorch's random "
      "numbers (one batch's loss varies by sd {:.3f} (1 head), {:.3f} (2 heads) over our tail)",
      tail, one.tail_total_sd(), two.tail_total_sd());
  cmp.add("1-head loss at the end", kDocOneHead, one.tail_total(), tolerance, why);
  cmp.add("2-head loss at the end", kDocTwoHeads, two.tail_total(), tolerance, why);
  cmp.add_exact("2 heads end lower than 1 head", "True",
                two.tail_total() < one.tail_total() ? "True" : "False");
}

// ---- 2. the claim: do two heads reach near zero with more training? One Study per code ----
std::map<std::string, Study> long_study(const Settings& w, RunContext& ctx) {
  ctx.section("Longer training over seeds (the claim that two heads reach near zero)");
  const size_t long_tail = tail_length(static_cast<size_t>(w.long_iters));
  Table study_table(fmt::format("Tail means (last {} of {} iterations)", long_tail, w.long_iters),
                    {"position code", "seed", "1 head", "2 heads", "2 heads: position term",
                     "2 heads: content term"});
  LinePlot lp = kit::line_plot("Two heads, longer training: document position code vs binary code",
                               "iteration", "loss", kit::Axes::kLogY);
  std::map<std::string, Study> studies;
  for (const std::string code : {"document", "binary"}) {
    const auto tk = make_task(code);
    Study& st = studies[code];
    for (int64_t s = 0; s < w.seeds; ++s) {
      const uint64_t sd = w.seed + 1000 * static_cast<uint64_t>(s + 1);
      const Curve c1 = train(1, tk, w.long_iters, w.batch, w.lr, sd);
      const Curve c2 = train(2, tk, w.long_iters, w.batch, w.lr, sd);
      st.one_total.push_back(c1.tail_total());
      st.two_total.push_back(c2.tail_total());
      st.two_position.push_back(c2.tail_position());
      st.two_content.push_back(c2.tail_content());
      study_table.add_row({code, std::to_string(sd), fixed(c1.tail_total(), 4),
                           fixed(c2.tail_total(), 4), fixed(c2.tail_position(), 4),
                           fixed(c2.tail_content(), 4)});
      if (s == 0) st.first_two_heads = c2;
    }
    const std::string colour = code == "document" ? "#3b82f6" : "#f59e0b";
    Series total = kit::step_series("2 heads, " + code + " code", st.first_two_heads.total),
           term = kit::step_series("its position term", st.first_two_heads.position);
    total.colour = term.colour = colour;
    term.dashed = true;
    lp.series.insert(lp.series.end(), {total, term});
  }
  const auto doc_task = make_task("document");
  const double floor = position_floor(doc_task);
  lp.refs = {{RefLine::kHorizontal, floor,
              fmt::format("position-term floor {:.3f} (positions {} share a code)", floor,
                          fmt::join(positions_sharing_target_code(doc_task), ", "))}};
  ctx.table(study_table);
  ctx.figure("loss_long_training", line_plot_svg(lp),
             "Two heads trained longer (solid: total loss, dashed: its position term): with the "
             "document's code the position term stalls above its floor");
  return studies;
}

void judge_long_study(const Settings& w,
                      const std::map<std::string, Study>& studies,
                      RunContext& ctx,
                      DocumentComparison& cmp) {
  const Study &doc = studies.at("document"), &bin = studies.at("binary");
  const auto doc_task = make_task("document");
  const double floor = position_floor(doc_task);
  const std::vector<int64_t> shared = positions_sharing_target_code(doc_task);
  const double best_two_doc = kit::min_of(doc.two_total);
  const double worst_two_doc = kit::max_of(doc.two_total);
  const double worst_two_bin = kit::max_of(bin.two_total);
  bool lower_every_seed = true;
  for (const Study* st : {&doc, &bin})
    for (size_t i = 0; i < st->one_total.size(); ++i)
      lower_every_seed = lower_every_seed && st->two_total[i] < st->one_total[i];
  const double doc_position = kit::mean_of(doc.two_position),
               bin_position = kit::mean_of(bin.two_position),
               doc_content = kit::mean_of(doc.two_content),
               bin_content = kit::mean_of(bin.two_content);
  kit::record(ctx, {{"position_term_floor_document_code", floor},
                    {"positions_sharing_target_code", shared},
                    {"two_head_long_best_document_code", best_two_doc},
                    {"two_head_long_worst_document_code", worst_two_doc},
                    {"two_head_long_worst_binary_code", worst_two_bin},
                    {"two_head_long_position_term_document_code", doc_position},
                    {"two_head_long_position_term_binary_code", bin_position},
                    {"two_head_long_content_term_document_code", doc_content},
                    {"two_head_long_content_term_binary_code", bin_content},
                    {"two_heads_lower_every_seed", lower_every_seed}});
  const bool near_zero = worst_two_doc < kNearZero;
  // 002: "the single head plateaus at the average of the two targets". The tolerance is three
  // standard deviations of the one-head tail means over seeds (the run-to-run noise).
  const double average_loss = average_map_loss(doc_task, w.batch, w.seed);
  const kit::Spread one_doc = kit::spread_of(doc.one_total);
  ctx.result("average_map_loss_document_code", average_loss);
  cmp.add("1 head plateaus at the average of the two targets (loss of the averaged map)",
          average_loss, one_doc.mean, 3 * one_doc.sd,
          fmt::format("the averaged map (P + C) / 2 scores {:.4f}, the best any single map can do; "
                      "one head ends at {:.4f} (sd {:.4f} over {} seed{}) and stays there: a head "
                      "cannot draw that map, as its position half needs positions {} told apart "
                      "(one code) and its content half the planted key singled out",
                      average_loss, one_doc.mean, one_doc.sd, w.seeds, w.seeds == 1 ? "" : "s",
                      fmt::join(shared, " and ")))
      .not_judged_if(w.seeds < 2, "one seed gives no spread to judge by (--seeds 2 or more)");
  cmp.add_exact("2 heads lower than 1 head in every seed of the longer study", "True",
                lower_every_seed ? "True" : "False");
  cmp.add_exact(
      fmt::format("2 heads drive the loss to near zero (< {}, document's code)", kNearZero), "True",
      near_zero ? "True" : "False",
      near_zero
          ? ""
          : fmt::format(
                "measured below: positions {} share the target's position code, so the "
                "position term cannot fall below {:.3f} (two heads: {:.3f}); and a bilinear "
                "score is linear in the key's content, so no head singles out the planted unit "
                "content among Gaussian ones (keys further along it score higher): the content "
                "term stays at {:.3f} ({:.3f} with the binary code)",
                fmt::join(shared, " and "), floor, doc_position, doc_content, bin_content));
  ctx.compare(cmp);
  ctx.note(fmt::format(
      "Two heads {} one head in every seed, and they {} drive the loss to near zero (< {}). "
      "With the document's inputs two heads end at {:.3f}-{:.3f} after {} iterations (tail means "
      "over {} seed{}). "
      "Two causes, each visible in the terms: (1) positions {} get the same position code, so "
      "the position term has a floor of {:.3f} (two heads reach {:.3f}); a binary code removes "
      "the floor (its position term: {:.3f}). (2) The content target is not "
      "expressible by any single softmax head: the score q.W_Q W_K^T k is linear in the key's "
      "content, so it ranks keys by their projection on one direction and cannot pick out "
      "exactly the planted unit vector among N(0,1) contents; that term stays at {:.3f} with the "
      "document's code and {:.3f} with the binary one (worst 2-head total with the binary code: "
      "{:.3f}).",
      lower_every_seed ? "beat" : "do not", near_zero ? "do" : "do not", kNearZero, best_two_doc,
      worst_two_doc, w.long_iters, w.seeds, w.seeds == 1 ? "" : "s", fmt::join(shared, " and "),
      floor, doc_position, bin_position, doc_content, bin_content, worst_two_bin));
}

void run(const Config& cfg, RunContext& ctx) {
  const Settings w{cfg.get_int("iters"), cfg.get_int("batch_size"), cfg.get_int("long_iters"),
                   cfg.get_int("seeds"), cfg.get_real("lr"),        ctx.seed()};
  DocumentComparison cmp;
  document_setting(cfg, w, ctx, cmp);
  const std::map<std::string, Study> studies = long_study(w, ctx);
  judge_long_study(w, studies, ctx, cmp);
}

}  // namespace

Experiment two_relation() {
  Experiment e;
  e.name = "two-relation";
  e.source = "002 §39.7.1";
  e.purpose = "One head vs two heads on two contradictory attention targets; tests the claim";
  e.config.add_int("iters", 400, "Adam steps in the document's setting", {.min = 1})
      .add_string("position_code", "document",
                  "position features: the document's (identity columns) or binary",
                  {"document", "binary"})
      .add_int("long_iters", 3000, "Adam steps in the longer study", {.min = 1})
      .add_int("seeds", 3, "seeds per position code in the longer study", {.min = 1})
      .add_int("seed", 11, "random seed (weights and data); the document uses 11", {.min = 0});
  add_optimizer_fields(e.config, {.batch_size = 32, .lr = 5e-3});  // Adam, constant rate
  e.quick = {{"iters", "150"}, {"long_iters", "300"}, {"seeds", "1"}};
  e.run = run;
  return e;
}

}  // namespace attn::experiments
