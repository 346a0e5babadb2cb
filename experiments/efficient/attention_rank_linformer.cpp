// attention-rank part 3 (attention_rank.h): Linformer's projection rank k against held-out
// accuracy on associative recall ("k1 v1 ... kn vn ? q" -> the value under q).
//
// Linformer compresses the T keys and values to k rows (E, F: k x T, learned), so its attention
// matrix P (T,k) times E (k,T) has rank at most k. The same model (experiments/common/
// mixer_model.h, two Linformer blocks) is trained at each k of --linformer_ranks and at k = T,
// where nothing is compressed (E can learn the identity): the reference. Recall needs each
// value to find the key before it (a shift, a full-rank pattern) and the query to find its key.
#include "data/tasks/recall.h"
#include "experiments/common/mixer_model.h"
#include "experiments/efficient/attention_rank.h"
#include "experiments/kit/classifier_steps.h"
#include "experiments/kit/kit.h"
#include "experiments/kit/spread.h"
#include "nn/attention/linformer_attention.h"

namespace attn::experiments::rank {

namespace {

constexpr int64_t kRecallLayers = 2;  // the depth attention-zoo trains recall with

// Held-out accuracy of a Linformer model with projection rank k, trained through kit::fit.
double recall_accuracy(int64_t k,
                       const Config& cfg,
                       const data::RecallTask& task,
                       const std::vector<kit::ClassBatch>& held,
                       RunContext& ctx) {
  const int64_t t = task.max_src_len(), d_model = cfg.get_int("d_model"),
                nhead = cfg.get_int("nhead");
  Generator init(ctx.seed() + 17), data_gen(ctx.seed() + 18);
  MixerModel m(
      {.vocab = task.tokenizer().vocab_size(),
       .max_len = t,
       .d_model = d_model,
       .layers = kRecallLayers,
       .classes = task.num_classes()},
      [&](int64_t, Generator& g) {
        auto layer = std::make_shared<nn::LinformerAttention>(d_model, nhead, t, k, g);
        return Mixer{layer, [layer](const Var& x) { return layer->forward(x); }};
      },
      init);
  train::FitSettings s =
      kit::fit_settings(ctx, fmt::format("linformer k {}", k), cfg.get_int("recall_steps"));
  s.batch_size = cfg.get_int("batch_size");
  s.optimizer.lr = cfg.get_real("lr");  // constant rate, as attention-zoo trains recall
  train::fit(m, s, [&](const train::BatchPart& part) {
    return kit::class_loss(m, kit::class_batch(task, s.batch_size, data_gen), part);
  });
  return kit::class_accuracy(m, held);
}

}  // namespace

void linformer_part(const Config& cfg, RunContext& ctx, DocumentComparison& cmp) {
  const data::RecallTask task({.num_pairs = cfg.get_int("recall_pairs")});
  const int64_t t = task.max_src_len(), n = cfg.get_int("eval_size");
  ctx.section(fmt::format(
      "Part 3: Linformer's projection rank k on recall (T = {}, {} steps each, {} held-out)", t,
      cfg.get_int("recall_steps"), n));
  Generator held_gen(ctx.seed() + 99);
  const std::vector<kit::ClassBatch> held = kit::class_batches(task, n, 250, held_gen);

  std::vector<int64_t> ranks = cfg.get_ints("linformer_ranks");
  ranks.push_back(t);  // the reference: no compression
  // Each k's model is independent (its own generators), so they train side by side.
  const std::vector<double> accuracy = kit::side_by_side(
      ranks.size(), [&](size_t i) { return recall_accuracy(ranks[i], cfg, task, held, ctx); });
  std::vector<double> ks;
  Table table("Held-out recall accuracy against Linformer's k (chance = 1 / values = 0.1)",
              {"k", "attention matrix rank at most", "held-out accuracy"});
  for (size_t i = 0; i < ranks.size(); ++i) {
    const int64_t k = ranks[i];
    const double a = accuracy[i];
    ks.push_back(static_cast<double>(k));
    table.add_row(
        {k == t ? fmt::format("{} (= T)", k) : std::to_string(k), std::to_string(k), fixed(a)});
    ctx.result(fmt::format("linformer_accuracy_k{}", k), a);
  }
  ctx.table(table);

  LinePlot p = kit::line_plot("Linformer on recall: accuracy against the projection rank k",
                              "k (compressed rows)", "held-out accuracy", kit::Axes::kLogX);
  p.series = {{"Linformer", ks, accuracy}};
  p.refs = {{RefLine::kHorizontal, 0.1, "chance"},
            {RefLine::kVertical, static_cast<double>(t), "k = T"}};
  ctx.figure("linformer_rank", line_plot_svg(p), "Recall accuracy at each projection rank k");

  // The difference of two rates measured on n examples each has a standard error of at most
  // sqrt(2 * 0.25 / n) (both at 0.5). The tolerance is three of those.
  const double tol = 3 * kit::rate_difference_se(0.5, 0.5, static_cast<double>(n));
  const double reference = accuracy.back();
  const double learned = 0.1 + 3 * 0.5 / std::sqrt(static_cast<double>(n));
  // The reason of a DIFFERS row, from this run: the smallest k whose accuracy is within the
  // tolerance of k = T's.
  std::string enough = "no k below T";
  for (size_t i = 0; i + 1 < ranks.size(); ++i)
    if (reference - accuracy[i] <= tol) {
      enough = fmt::format("k = {}", ranks[i]);
      break;
    }
  const std::string reason =
      fmt::format("too few compressed rows: accuracy rises with k, {} matches k = T", enough);
  // Each accuracy is a count over the same n examples, so the difference is exactly 0 whenever
  // both models answer as many right: an exact quantity (not a copied constant).
  for (size_t i = 0; i + 1 < ranks.size(); ++i)
    cmp.add(fmt::format("Linformer k = {}: recall accuracy lost against k = T = {}", ranks[i], t),
            0.0, reference - accuracy[i], tol, reason)
        .exact_quantity()
        .needs_training(reference, learned, "k = T accuracy")
        .needs_samples(n, 200);
}

}  // namespace attn::experiments::rank
