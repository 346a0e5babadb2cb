#include "experiments/positions/reversal_no_positions_model.h"

#include "experiments/kit/kit.h"

#include "nn/attention/multihead_attention.h"
#include "nn/positional/learned.h"
#include "nn/positional/sinusoidal.h"

namespace attn::experiments::no_positions {

class OneLayerAttention : public nn::Module {
 public:
  OneLayerAttention(
      int64_t vocab, int64_t seq_len, int64_t d_model, int64_t heads, Positions pos, Generator& gen)
      : Module("OneLayerAttention") {
    emb = register_module("emb", std::make_shared<nn::Embedding>(vocab, d_model, gen));
    if (pos == Positions::kLearned)
      learned = register_module(
          "pos", std::make_shared<nn::LearnedPositionalEmbedding>(seq_len, d_model, gen));
    if (pos == Positions::kSinusoidal)
      sinusoidal = register_module(
          "pos", std::make_shared<nn::SinusoidalPositionalEncoding>(seq_len, d_model));
    attn = register_module("attn", std::make_shared<nn::MultiheadAttention>(d_model, heads, gen));
    readout = register_module("readout", std::make_shared<nn::Linear>(d_model, vocab, true, gen));
  }

  // ids (B,T) -> out: logits (B,T,V), weights (B,H,T,T).
  nn::AttentionOutput forward(const Tensor& ids) const {
    Var x = emb->forward(ids);  // (B,T,d)
    if (learned) x = learned->forward(x);
    if (sinusoidal) x = sinusoidal->forward(x);
    nn::AttentionOutput a = attn->forward(x, x, x);
    return {readout->forward(a.out), a.weights};
  }

  std::shared_ptr<nn::Embedding> emb;
  std::shared_ptr<nn::LearnedPositionalEmbedding> learned;
  std::shared_ptr<nn::SinusoidalPositionalEncoding> sinusoidal;
  std::shared_ptr<nn::MultiheadAttention> attn;
  std::shared_ptr<nn::Linear> readout;
};

namespace {

// E[max_k count_k] for n i.i.d. uniform draws from v categories, exactly:
// P(max <= m) = n! [x^n] (sum_{k<=m} (x/v)^k / k!)^v, and E[max] = sum_{m>=0} P(max > m).
double expected_max_count(int64_t n, int64_t v) {
  double e = 0;
  for (int64_t m = 0; m < n; ++m) {
    std::vector<double> term(m + 1), poly(n + 1, 0.0);
    double f = 1;
    for (int64_t k = 0; k <= m; ++k) {
      term[k] = f;  // (1/v)^k / k!
      f /= static_cast<double>(v) * static_cast<double>(k + 1);
    }
    poly[0] = 1;
    for (int64_t c = 0; c < v; ++c) {  // multiply by `term` v times, keeping degrees <= n
      std::vector<double> next(n + 1, 0.0);
      for (int64_t i = 0; i <= n; ++i)
        if (poly[i] != 0)
          for (int64_t k = 0; k <= m && i + k <= n; ++k) next[i + k] += poly[i] * term[k];
      poly.swap(next);
    }
    double at_most = poly[n];
    for (int64_t k = 2; k <= n; ++k) at_most *= static_cast<double>(k);
    e += 1.0 - at_most;
  }
  return e;
}

Evaluation evaluate(const OneLayerAttention& model, const Batch& data) {
  NoGrad off;
  const nn::AttentionOutput o = model.forward(data.ids);
  const Tensor& logits = o.out.value();  // (B,T,V)
  const Tensor& w = o.weights.value();   // (B,H,T,T)
  const int64_t b = logits.size(0), t = logits.size(1), v = logits.size(2), h = w.size(1);
  Evaluation e;
  e.loss = cross_entropy(o.out, data.targets).item();
  e.per_position.assign(t, 0.0);
  int64_t whole = 0;
  for (int64_t r = 0; r < b; ++r) {
    bool all = true;
    for (int64_t i = 0; i < t; ++i) {
      const real* row = logits.data() + (r * t + i) * v;
      const bool ok = kit::argmax(row, v) == static_cast<int64_t>(data.targets[r * t + i]);
      e.per_position[i] += ok;
      all = all && ok;
      for (int64_t hh = 0; hh < h; ++hh)
        e.anti_diagonal += w[((r * h + hh) * t + i) * t + t - 1 - i];
    }
    whole += all;
  }
  for (double& p : e.per_position) p /= static_cast<double>(b);
  e.accuracy = std::accumulate(e.per_position.begin(), e.per_position.end(), 0.0) / t;
  e.sequence_accuracy = static_cast<double>(whole) / static_cast<double>(b);
  e.anti_diagonal /= static_cast<double>(b * t * h);
  return e;
}

}  // namespace

const char* name_of(Positions p) {
  return p == Positions::kNone ? "none" : p == Positions::kLearned ? "learned" : "sinusoidal";
}

Batch sample_batch(const data::SequenceTask& task, int64_t batch, Generator& gen) {
  const int64_t t = task.config().max_len;
  Batch b{Tensor({batch, t}), Tensor({batch, t})};
  for (int64_t r = 0; r < batch; ++r) {
    const data::Example ex = task.sample(gen);
    for (int64_t i = 0; i < t; ++i) {
      b.ids[r * t + i] = static_cast<real>(ex.src[i] - data::kNumSpecial);
      b.targets[r * t + i] = static_cast<real>(ex.tgt[i] - data::kNumSpecial);
    }
  }
  return b;
}

double order_free_ceiling(int64_t seq_len, int64_t alphabet) {
  const int64_t n = seq_len % 2 == 0 ? seq_len - 1 : seq_len;
  return expected_max_count(n, alphabet) / static_cast<double>(n);
}

Tensor slice_rows(const Tensor& x, int64_t n) {
  Tensor out({n, x.size(1)});
  std::copy(x.data(), x.data() + out.numel(), out.data());
  return out;
}

double equivariance_error(const OneLayerAttention& model,
                          const Tensor& ids,
                          const std::vector<int64_t>& perm) {
  NoGrad off;
  const int64_t b = ids.size(0), t = ids.size(1);
  Tensor permuted({b, t});
  for (int64_t r = 0; r < b; ++r)
    for (int64_t i = 0; i < t; ++i) permuted[r * t + i] = ids[r * t + perm[i]];
  const Tensor a = model.forward(ids).out.value(), p = model.forward(permuted).out.value();
  const int64_t v = a.size(2);
  double m = 0;
  for (int64_t r = 0; r < b; ++r)
    for (int64_t i = 0; i < t; ++i)
      for (int64_t c = 0; c < v; ++c)
        m = std::max(m, static_cast<double>(
                            std::fabs(p[(r * t + i) * v + c] - a[(r * t + perm[i]) * v + c])));
  return m;
}

Trained train(Positions pos,
              const Settings& s,
              const data::SequenceTask& task,
              const Batch& held_out,
              uint64_t seed) {
  Generator gen(seed);
  Trained tr{pos,
             std::make_shared<OneLayerAttention>(s.vocab, s.seq_len, s.d_model, s.heads, pos, gen)};
  // The curve is measured often on the first (up to) 500 held-out sequences; the final numbers
  // on all of them.
  const int64_t n_curve = std::min<int64_t>(500, held_out.ids.size(0));
  const Batch curve_set{slice_rows(held_out.ids, n_curve), slice_rows(held_out.targets, n_curve)};
  const train::FitSettings fs{.name = name_of(pos),
                              .steps = s.steps,
                              .batch_size = s.batch,
                              .optimizer = {.lr = s.lr},  // Adam, constant rate
                              .eval_every = s.eval_every};
  const train::TrainResult r = train::fit(
      *tr.model, fs,
      [&](const train::BatchPart& part) {
        const Batch b = sample_batch(task, s.batch, gen);
        const Tensor targets = part.rows(b.targets);
        return train::StepLoss{cross_entropy(tr.model->forward(part.rows(b.ids)).out, targets),
                               targets.numel()};
      },
      [&](int64_t step) {
        const double acc = evaluate(*tr.model, curve_set).accuracy;
        tr.eval_steps.push_back(static_cast<double>(step));
        tr.eval_accuracy.push_back(acc);
        if (acc >= 0.5 && tr.first_step_50 < 0) tr.first_step_50 = step;
        if (acc >= 0.9 && tr.first_step_90 < 0) tr.first_step_90 = step;
        return train::Metrics{{"accuracy", acc}};
      });
  tr.loss = r.losses;
  tr.final = evaluate(*tr.model, held_out);
  return tr;
}

Tensor head_mean_attention(const OneLayerAttention& model, const Tensor& one) {
  NoGrad off;
  const Tensor w = model.forward(one).weights.value();  // (1,H,T,T)
  const int64_t h = w.size(1), t = w.size(2);
  Tensor mean({t, t});
  for (int64_t hh = 0; hh < h; ++hh)
    for (int64_t k = 0; k < t * t; ++k) mean[k] += w[hh * t * t + k] / static_cast<real>(h);
  return mean;
}

}  // namespace attn::experiments::no_positions
