#include "experiments/common/dca_extrapolation.h"

#include "data/corpus.h"
#include "experiments/common/mixer_model.h"
#include "experiments/kit/kit.h"
#include "nn/attention/dual_chunk_attention.h"

namespace attn::experiments {

namespace {

struct DcaExtrapolationOptions {
  int64_t d_model = 32, nhead = 2, layers = 2;
  int64_t train_len = 32, steps = 300, batch = 16;
  double lr = 3e-3;
  int64_t sentences = 1500;   // toy-grammar corpus size
  int64_t eval_chars = 8192;  // validation characters scored per length (at least one window)
  std::vector<int64_t> eval_lengths = {32, 128, 256};
};

struct Scored {
  double accuracy = 0, loss = 0;
};

// Next-character accuracy and mean loss over every position of the windows.
Scored score(const MixerModel& m, const std::vector<data::Example>& windows) {
  NoGrad off;
  kit::Accuracy accuracy;
  int64_t n = 0;
  double loss = 0;
  for (size_t s = 0; s < windows.size(); s += 8) {
    const std::vector<data::Example> part(
        windows.begin() + static_cast<std::ptrdiff_t>(s),
        windows.begin() + static_cast<std::ptrdiff_t>(std::min(windows.size(), s + 8)));
    const data::Batch b = data::collate_language_model(part);
    const Var logits = m.forward_positions(b.tgt_in);  // (B,T,V)
    const int64_t rows = b.tgt_in.numel();
    loss += cross_entropy(logits, b.tgt_out).item() * static_cast<double>(rows);
    accuracy.add(logits.value(), b.tgt_out);
    n += rows;
  }
  return {accuracy.value(), loss / static_cast<double>(n)};
}

DcaExtrapolation run_dca_extrapolation(const DcaExtrapolationOptions& o, uint64_t seed) {
  const data::CharCorpus corpus(data::toy_grammar_text(o.sentences, seed), 0.1);
  const int64_t vocab = corpus.tokenizer().vocab_size();
  Generator init(seed), draw(seed + 1);
  // The attention layers, kept to switch their position indices after training.
  std::vector<std::shared_ptr<nn::RopeAttention>> attention;
  MixerModel m(
      {.vocab = vocab,
       .max_len = *std::max_element(o.eval_lengths.begin(), o.eval_lengths.end()),
       .d_model = o.d_model,
       .layers = o.layers,
       .classes = vocab,
       .positions = false},  // RoPE inside attention is the only position signal
      [&](int64_t, Generator& g) {
        auto a = std::make_shared<nn::RopeAttention>(o.d_model, o.nhead, g, o.train_len);
        attention.push_back(a);
        return Mixer{a, [a](const Var& x) { return a->forward(x); }};
      },
      init);
  const data::LanguageModelTask train_task(corpus, o.train_len, data::Split::kTrain);
  train::FitSettings fs;
  fs.name = "rope (dual chunk study)";
  fs.steps = o.steps;
  fs.batch_size = o.batch;
  fs.optimizer.lr = o.lr;  // Adam, constant rate
  DcaExtrapolation r;
  r.train_seconds =
      train::fit(m, fs, [&](const train::BatchPart& part) {
        std::vector<data::Example> xs;
        for (int64_t i = 0; i < o.batch; ++i) xs.push_back(train_task.sample(draw));
        const data::Batch b = data::collate_language_model(part.items(xs));
        return train::StepLoss{cross_entropy(m.forward_positions(b.tgt_in), b.tgt_out),
                               b.tgt_out.numel()};
      }).wall_seconds;
  for (int64_t len : o.eval_lengths) {
    std::vector<data::Example> windows =
        data::LanguageModelTask(corpus, len, data::Split::kValidation).all_windows();
    windows.resize(std::clamp<size_t>(static_cast<size_t>(o.eval_chars / len), 1, windows.size()));
    for (auto mode : {nn::RopePositions::kPlain, nn::RopePositions::kDualChunk}) {
      for (const auto& a : attention) a->set_positions(mode);
      const Scored s = score(m, windows);
      (mode == nn::RopePositions::kPlain ? r.plain_accuracy : r.dca_accuracy).push_back(s.accuracy);
      (mode == nn::RopePositions::kPlain ? r.plain_loss : r.dca_loss).push_back(s.loss);
    }
  }
  const int64_t longest = *std::max_element(o.eval_lengths.begin(), o.eval_lengths.end());
  const Tensor d = nn::dual_chunk_distances(longest, o.train_len, attention.front()->chunk());
  for (int64_t i = 0; i < d.numel(); ++i)
    r.max_dca_distance = std::max<double>(r.max_dca_distance, d[i]);
  return r;
}

}  // namespace

DcaExtrapolation dca_part(const Config& cfg, RunContext& ctx) {
  DcaExtrapolationOptions o;
  o.d_model = cfg.get_int("d_model");
  o.nhead = cfg.get_int("nhead");
  o.layers = cfg.get_int("num_layers");
  o.train_len = cfg.get_int("rope_train_len");
  o.steps = cfg.get_int("rope_steps");
  o.lr = cfg.get_real("lr");
  o.eval_lengths = cfg.get_ints("rope_eval_lengths");
  ctx.section(fmt::format(
      "Part 3: a RoPE character model trained at T = {} ({} steps), read longer with plain RoPE "
      "indices and with DCA's (chunk {})",
      o.train_len, o.steps, o.train_len / 2));
  const DcaExtrapolation r = run_dca_extrapolation(o, ctx.seed());
  Table t("Next-character accuracy on validation text (the same weights, two index schemes)",
          {"T", "plain RoPE", "DCA", "plain loss", "DCA loss"});
  for (size_t i = 0; i < o.eval_lengths.size(); ++i)
    t.add_row({std::to_string(o.eval_lengths[i]), fixed(r.plain_accuracy[i], 3),
               fixed(r.dca_accuracy[i], 3), fixed(r.plain_loss[i], 3), fixed(r.dca_loss[i], 3)});
  ctx.table(t);
  ctx.result("rope_eval_lengths", o.eval_lengths);
  ctx.result("rope_plain_accuracy", r.plain_accuracy);
  ctx.result("rope_dca_accuracy", r.dca_accuracy);
  ctx.result("rope_plain_loss", r.plain_loss);
  ctx.result("rope_dca_loss", r.dca_loss);
  ctx.result("dca_max_distance", r.max_dca_distance);
  ctx.result("rope_train_seconds", r.train_seconds);
  std::vector<double> xs(o.eval_lengths.begin(), o.eval_lengths.end());
  LinePlot p =
      kit::line_plot(fmt::format("RoPE model trained at T = {}, read at longer T", o.train_len),
                     "evaluation length T", "next-character accuracy", kit::Axes::kLogX);
  p.series = {{"plain RoPE indices", xs, r.plain_accuracy}, {"DCA indices", xs, r.dca_accuracy}};
  p.refs = {{RefLine::kVertical, static_cast<double>(o.train_len), "training length"}};
  ctx.figure("dca_extrapolation", line_plot_svg(p),
             "Plain RoPE against dual chunk attention beyond the training length");
  return r;
}

}  // namespace attn::experiments
