// attention-zoo's part 3, the length test for dual chunk attention: a character language model
// with RoPE attention (no other positions) trained on windows of --rope_train_len characters of
// the toy grammar, then read at --rope_eval_lengths twice with the SAME weights — plain RoPE
// indices (distances up to T - 1, most never seen in training) and DCA indices (every distance
// below the training length). The model trains with Adam at a constant rate (--lr,
// --rope_steps), and is scored on up to kEvalChars validation characters per length.
#include "data/corpus.h"
#include "experiments/common/mixer_model.h"
#include "experiments/efficient/attention_zoo_claims.h"
#include "experiments/kit/kit.h"
#include "experiments/kit/language_model_steps.h"
#include "experiments/kit/window_batches.h"
#include "nn/attention/dual_chunk_attention.h"

namespace attn::experiments::zoo {

namespace {

constexpr int64_t kBatch = 16;        // windows per training step
constexpr int64_t kSentences = 1500;  // toy-grammar corpus size
// Validation characters scored per length (at least one window).
constexpr int64_t kEvalChars = 8192;

struct Scored {
  double accuracy = 0, loss = 0;
};

// Next-character accuracy and mean loss over every position of the windows.
Scored score(const MixerModel& m, const std::vector<data::Example>& windows) {
  NoGrad off;
  kit::Accuracy accuracy;
  int64_t n = 0;
  double loss = 0;
  for (const data::Batch& b : kit::window_batches(windows, 8)) {
    const Var logits = m.forward_positions(b.tgt_in);  // (B,T,V)
    const int64_t rows = b.tgt_in.numel();
    loss += cross_entropy(logits, b.tgt_out).item() * static_cast<double>(rows);
    accuracy.add(logits.value(), b.tgt_out);
    n += rows;
  }
  return {accuracy.value(), loss / static_cast<double>(n)};
}

DcaExtrapolation run_dca_extrapolation(const Config& cfg, uint64_t seed) {
  const int64_t d_model = cfg.get_int("d_model"), nhead = cfg.get_int("nhead");
  const int64_t train_len = cfg.get_int("rope_train_len");
  const std::vector<int64_t> eval_lengths = cfg.get_ints("rope_eval_lengths");
  const data::CharCorpus corpus(data::toy_grammar_text(kSentences, seed), 0.1);
  const int64_t vocab = corpus.tokenizer().vocab_size();
  Generator init(seed), draw(seed + 1);
  // The attention layers, kept to switch their position indices after training.
  std::vector<std::shared_ptr<nn::RopeAttention>> attention;
  MixerModel m(
      {.vocab = vocab,
       .max_len = *std::max_element(eval_lengths.begin(), eval_lengths.end()),
       .d_model = d_model,
       .layers = cfg.get_int("num_layers"),
       .classes = vocab,
       .positions = false},  // RoPE inside attention is the only position signal
      [&](int64_t, Generator& g) {
        auto a = std::make_shared<nn::RopeAttention>(d_model, nhead, g, train_len);
        attention.push_back(a);
        return Mixer{a, [a](const Var& x) { return a->forward(x); }};
      },
      init);
  const data::LanguageModelTask train_task(corpus, train_len, data::Split::kTrain);
  const train::FitSettings fs{.name = "rope (dual chunk study)",
                              .steps = cfg.get_int("rope_steps"),
                              .batch_size = kBatch,
                              .optimizer = {.lr = cfg.get_real("lr")}};  // Adam, constant rate
  DcaExtrapolation r;
  r.train_seconds = train::fit(m, fs, [&](const train::BatchPart& part) {
                      return kit::language_model_step(
                          train_task, kBatch, draw, part,
                          [&](const Tensor& ids) { return m.forward_positions(ids); });
                    }).wall_seconds;
  for (int64_t len : eval_lengths) {
    std::vector<data::Example> windows =
        data::LanguageModelTask(corpus, len, data::Split::kValidation).all_windows();
    windows.resize(std::clamp<size_t>(static_cast<size_t>(kEvalChars / len), 1, windows.size()));
    for (auto mode : {nn::RopePositions::kPlain, nn::RopePositions::kDualChunk}) {
      for (const auto& a : attention) a->set_positions(mode);
      const Scored s = score(m, windows);
      (mode == nn::RopePositions::kPlain ? r.plain_accuracy : r.dca_accuracy).push_back(s.accuracy);
      (mode == nn::RopePositions::kPlain ? r.plain_loss : r.dca_loss).push_back(s.loss);
    }
  }
  const int64_t longest = *std::max_element(eval_lengths.begin(), eval_lengths.end());
  const Tensor d = nn::dual_chunk_distances(longest, train_len, attention.front()->chunk());
  for (int64_t i = 0; i < d.numel(); ++i)
    r.max_dca_distance = std::max<double>(r.max_dca_distance, d[i]);
  return r;
}

}  // namespace

DcaExtrapolation dca_part(const Config& cfg, RunContext& ctx) {
  const int64_t train_len = cfg.get_int("rope_train_len");
  const std::vector<int64_t> eval_lengths = cfg.get_ints("rope_eval_lengths");
  ctx.section(fmt::format(
      "Part 3: a RoPE character model trained at T = {} ({} steps), read longer with plain RoPE "
      "indices and with DCA's (chunk {})",
      train_len, cfg.get_int("rope_steps"), train_len / 2));
  const DcaExtrapolation r = run_dca_extrapolation(cfg, ctx.seed());
  Table t("Next-character accuracy on validation text (the same weights, two index schemes)",
          {"T", "plain RoPE", "DCA", "plain loss", "DCA loss"});
  for (size_t i = 0; i < eval_lengths.size(); ++i)
    t.add_row({std::to_string(eval_lengths[i]), fixed(r.plain_accuracy[i], 3),
               fixed(r.dca_accuracy[i], 3), fixed(r.plain_loss[i], 3), fixed(r.dca_loss[i], 3)});
  ctx.table(t);
  ctx.result("rope_eval_lengths", eval_lengths);
  ctx.result("rope_plain_accuracy", r.plain_accuracy);
  ctx.result("rope_dca_accuracy", r.dca_accuracy);
  ctx.result("rope_plain_loss", r.plain_loss);
  ctx.result("rope_dca_loss", r.dca_loss);
  ctx.result("dca_max_distance", r.max_dca_distance);
  ctx.result("rope_train_seconds", r.train_seconds);
  std::vector<double> xs(eval_lengths.begin(), eval_lengths.end());
  LinePlot p =
      kit::line_plot(fmt::format("RoPE model trained at T = {}, read at longer T", train_len),
                     "evaluation length T", "next-character accuracy", kit::Axes::kLogX);
  p.series = {{"plain RoPE indices", xs, r.plain_accuracy}, {"DCA indices", xs, r.dca_accuracy}};
  p.refs = {{RefLine::kVertical, static_cast<double>(train_len), "training length"}};
  ctx.figure("dca_extrapolation", line_plot_svg(p),
             "Plain RoPE against dual chunk attention beyond the training length");
  return r;
}

}  // namespace attn::experiments::zoo
