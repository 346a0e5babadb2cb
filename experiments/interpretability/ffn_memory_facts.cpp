#include "experiments/interpretability/ffn_memory_facts.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/mode.h"
#include "data/batch.h"
#include "experiments/kit/evaluation.h"
#include "experiments/kit/fit.h"
#include "experiments/run_context.h"
#include "nn/transformer/decoder_only.h"

namespace attn::experiments {

std::string FactSet::text(int64_t i) const {
  std::string s;
  for (int64_t c : names[static_cast<size_t>(i)]) s += static_cast<char>('a' + c);
  return s + "=" + static_cast<char>('a' + values[static_cast<size_t>(i)]);
}

FactSet draw_facts(int64_t n, Generator& gen) {
  const int64_t possible = kFactLetters * kFactLetters * kFactLetters;
  if (n < 1 || n > possible)
    throw Error(fmt::format("ffn-memory: {} facts, but there are {} distinct three-letter names", n,
                            possible));
  FactSet f;
  std::set<std::vector<int64_t>> seen;
  while (f.size() < n) {
    std::vector<int64_t> name{gen.randint(kFactLetters), gen.randint(kFactLetters),
                              gen.randint(kFactLetters)};
    if (!seen.insert(name).second) continue;
    f.names.push_back(std::move(name));
    f.values.push_back(gen.randint(kFactLetters));
  }
  return f;
}

namespace {

// The facts `which` as ids (B, 4) "a b c =" and targets (B, 4): the value at the "=" position,
// the ignore index elsewhere (the name letters are random, nothing to learn there).
struct FactBatch {
  Tensor ids, targets;
};
FactBatch fact_batch(const FactSet& facts, const std::vector<int64_t>& which) {
  const auto b = static_cast<int64_t>(which.size());
  FactBatch out{Tensor({b, kFactLength}),
                Tensor::full({b, kFactLength}, static_cast<real>(data::kIgnoreIndex))};
  for (int64_t r = 0; r < b; ++r) {
    const auto i = static_cast<size_t>(which[static_cast<size_t>(r)]);
    for (int64_t t = 0; t < 3; ++t)
      out.ids[r * kFactLength + t] = static_cast<real>(facts.names[i][t]);
    out.ids[r * kFactLength + 3] = static_cast<real>(kFactLetters);  // "="
    out.targets[r * kFactLength + 3] = static_cast<real>(facts.values[i]);
  }
  return out;
}

double recall(nn::DecoderOnlyTransformer& model, const FactSet& facts) {
  NoGrad off;
  model.eval();
  kit::Accuracy acc;
  for (int64_t at = 0; at < facts.size(); at += 256) {
    std::vector<int64_t> which;
    for (int64_t i = at; i < std::min(at + 256, facts.size()); ++i) which.push_back(i);
    const FactBatch b = fact_batch(facts, which);
    acc.add(model.forward(b.ids).value(), b.targets, data::kIgnoreIndex);
  }
  model.train();
  return acc.value();
}

}  // namespace

FactRun train_facts(const FactSet& facts,
                    const FactSettings& s,
                    int64_t width,
                    uint64_t seed,
                    const RunContext& ctx,
                    const std::string& block) {
  nn::DecoderOnlyOptions o;
  o.vocab_size = kFactVocab;
  o.max_len = kFactLength;
  o.d_model = s.d_model;
  o.nhead = s.nhead;
  o.num_layers = 1;
  o.dim_feedforward = width;
  o.feed_forward = block;
  Generator init(seed), order(seed * 7919 + 17);
  nn::DecoderOnlyTransformer model(o, init);
  const std::string label = block.empty() ? "" : block + " ";
  train::FitSettings fs =
      kit::fit_settings(ctx, fmt::format("facts {}width {} seed {}", label, width, seed), s.steps);
  fs.batch_size = s.batch_size;
  fs.optimizer = {.lr = s.lr, .schedule = "cosine", .warmup = std::min<int64_t>(50, s.steps / 10)};
  fs.eval_every = std::max<int64_t>(1, s.steps / 5);
  train::fit(
      model, fs,
      [&](const train::BatchPart& part) {  // the whole batch drawn on every rank
        std::vector<int64_t> which;
        for (int64_t i = 0; i < fs.batch_size; ++i) which.push_back(order.randint(facts.size()));
        const FactBatch b = fact_batch(facts, which);
        return train::StepLoss{cross_entropy(model.forward(part.rows(b.ids)), part.rows(b.targets),
                                             data::kIgnoreIndex)};
      },
      [&](int64_t) {
        return train::Metrics{{"recall", recall(model, facts)}};
      });
  // linear1 (width, d) + its bias, linear2 (d, width) + its bias; or the plugin block's own.
  const nn::TransformerEncoderLayer& layer = (*model.layers)[0];
  const int64_t ffn = layer.feed_forward ? kit::count_parameters(*layer.feed_forward)
                                         : 2 * s.d_model * width + width + s.d_model;
  return {block, width, recall(model, facts), ffn};
}

}  // namespace attn::experiments
