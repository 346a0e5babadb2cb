#include "experiments/common/dca_extrapolation.h"

#include <algorithm>
#include <memory>

#include "autograd/functional.h"
#include "autograd/tape.h"
#include "data/batch.h"
#include "data/corpus.h"
#include "experiments/common/mixer_model.h"
#include "nn/attention/dual_chunk_attention.h"
#include "train/fit.h"

namespace attn::experiments {

namespace {

struct Scored {
  double accuracy = 0, loss = 0;
};

// Next-character accuracy and mean loss over every position of the windows.
Scored score(const MixerModel& m, const std::vector<data::Example>& windows) {
  NoGrad off;
  int64_t right = 0, n = 0;
  double loss = 0;
  for (size_t s = 0; s < windows.size(); s += 8) {
    const std::vector<data::Example> part(
        windows.begin() + static_cast<std::ptrdiff_t>(s),
        windows.begin() + static_cast<std::ptrdiff_t>(std::min(windows.size(), s + 8)));
    const data::Batch b = data::collate_language_model(part);
    const Var logits = m.forward_positions(b.tgt_in);  // (B,T,V)
    const int64_t rows = b.tgt_in.numel(), v = logits.size(2);
    loss += cross_entropy(logits, b.tgt_out).item() * static_cast<double>(rows);
    for (int64_t i = 0; i < rows; ++i) {
      const real* row = logits.value().data() + i * v;
      right += std::max_element(row, row + v) - row == static_cast<int64_t>(b.tgt_out[i]);
    }
    n += rows;
  }
  return {static_cast<double>(right) / static_cast<double>(n), loss / static_cast<double>(n)};
}

}  // namespace

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

}  // namespace attn::experiments
