#include "experiments/common/pair_memory_model.h"

#include "experiments/kit/kit.h"

namespace attn::experiments {

namespace {

// Token ids of the batch's keys, values (B, n) and queried keys (B, 1).
struct PairIds {
  Tensor keys, values, query;
};

PairIds pair_ids(const std::vector<data::Example>& batch) {
  if (batch.empty()) throw Error("PairMemoryModel: empty batch");
  const int64_t b = static_cast<int64_t>(batch.size());
  const int64_t n = (static_cast<int64_t>(batch[0].src.size()) - 2) / 2;
  PairIds p{Tensor({b, n}), Tensor({b, n}), Tensor({b, 1})};
  for (int64_t i = 0; i < b; ++i) {
    const auto& src = batch[static_cast<size_t>(i)].src;
    if (static_cast<int64_t>(src.size()) != 2 * n + 2)
      throw Error("PairMemoryModel: every example needs " + std::to_string(n) + " pairs, one has " +
                  std::to_string(src.size()) + " tokens");
    for (int64_t j = 0; j < n; ++j) {
      p.keys[i * n + j] = static_cast<real>(src[2 * j]);
      p.values[i * n + j] = static_cast<real>(src[2 * j + 1]);
    }
    p.query[i] = static_cast<real>(src.back());
  }
  return p;
}

Tensor labels(const std::vector<data::Example>& batch) {
  Tensor y({static_cast<int64_t>(batch.size())});
  for (size_t i = 0; i < batch.size(); ++i) y[static_cast<int64_t>(i)] = real(batch[i].label);
  return y;
}

std::vector<data::Example> draw(const data::Task& task, int64_t n, Generator& gen) {
  std::vector<data::Example> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(task.sample(gen));
  return out;
}

// Frobenius norm of the W_q and W_k rows of the packed in_proj gradient (3E, E).
double score_weight_grad_norm(const nn::MultiheadAttention& a) {
  if (!a.in_proj_weight.has_grad()) return 0;
  const Tensor& g = a.in_proj_weight.grad();
  const int64_t e = a.embed_dim();
  double s = 0;
  for (int64_t i = 0; i < 2 * e * e; ++i) s += double(g[i]) * g[i];
  return std::sqrt(s);
}

}  // namespace

PairMemoryModel::PairMemoryModel(int64_t vocab, int64_t d, bool scaled, Generator& gen)
    : Module("PairMemoryModel") {
  key_emb = register_module("key_emb", std::make_shared<nn::Embedding>(vocab, d, gen));
  val_emb = register_module("val_emb", std::make_shared<nn::Embedding>(vocab, d, gen));
  nn::MultiheadAttentionOptions o;
  o.scale = scaled;
  attn = register_module("attn", std::make_shared<nn::MultiheadAttention>(d, 1, gen, o));
  head = register_module("head", std::make_shared<nn::Linear>(d, vocab, true, gen));
}

Var PairMemoryModel::forward(const std::vector<data::Example>& batch) {
  const PairIds p = pair_ids(batch);
  const Var memory = add(key_emb->forward(p.keys), val_emb->forward(p.values));  // (B,n,d)
  const Var q = key_emb->forward(p.query);                                       // (B,1,d)
  const Var read = attn->forward(q, memory, memory).out;                         // (B,1,d)
  return reshape(head->forward(read), {p.query.size(0), -1});                    // (B,vocab)
}

Var PairMemoryModel::loss(const std::vector<data::Example>& batch) {
  return cross_entropy(forward(batch), labels(batch));
}

RecallRun train_pair_memory(const PairMemoryConfig& cfg, uint64_t seed) {
  const auto start = std::chrono::steady_clock::now();
  const data::RecallTask task({.num_pairs = cfg.pairs});
  Generator init(seed), data_gen(seed + 1), heldout_gen(seed + 2);
  PairMemoryModel model(task.tokenizer().vocab_size(), cfg.d, cfg.scaled, init);
  const std::vector<data::Example> heldout = draw(task, cfg.eval_size, heldout_gen);
  RecallRun r;
  auto evaluate = [&](int64_t step) {
    NoGrad off;
    const Tensor logits = model.forward(heldout).value();
    const Tensor& w = model.last_weights();  // (B,1,1,n)
    const int64_t n = w.size(-1), v = logits.size(1);
    double correct = 0, entropy = 0;
    for (int64_t i = 0; i < logits.size(0); ++i) {
      int64_t best = 0;
      for (int64_t c = 1; c < v; ++c)
        if (logits[i * v + c] > logits[i * v + best]) best = c;
      correct += best == heldout[static_cast<size_t>(i)].label ? 1 : 0;
      for (int64_t j = 0; j < n; ++j) {
        const double p = w[i * n + j];
        entropy -= p > 0 ? p * std::log(p) : 0;
      }
    }
    r.eval_steps.push_back(static_cast<double>(step));
    r.eval_accuracy.push_back(correct / static_cast<double>(heldout.size()));
    r.eval_entropy.push_back(entropy / static_cast<double>(heldout.size()));
  };
  evaluate(0);
  train::FitSettings fs;
  fs.name = fmt::format("pair memory d {} {}", cfg.d, cfg.scaled ? "scaled" : "unscaled");
  fs.steps = cfg.steps;
  fs.batch_size = cfg.batch;
  fs.optimizer.lr = cfg.lr;  // Adam, constant rate
  fs.eval_every = cfg.eval_every;
  train::Fit fit(model, fs, [&](const train::BatchPart& part) {
    return train::StepLoss{model.loss(part.items(draw(task, cfg.batch, data_gen)))};
  });
  fit.after_backward(
      [&](int64_t) { r.score_grad_norm.push_back(score_weight_grad_norm(*model.attn)); });
  r.losses = fit.run([&](int64_t step) {
                  evaluate(step);
                  return train::Metrics{{"accuracy", r.eval_accuracy.back()}};
                })
                 .losses;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace attn::experiments
