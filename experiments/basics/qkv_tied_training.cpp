#include "experiments/basics/qkv_tied_training.h"

#include "experiments/kit/classifier_steps.h"
#include "experiments/kit/kit.h"
#include "experiments/kit/spread.h"
#include "nn/positional/learned.h"

namespace attn::experiments {

namespace {

struct TaskShape {
  int64_t seq_len, vocab, width;
};

// A batch of the previous-token task: ids (B,T) uniform over the vocabulary, labels (B,T) with
// labels[b,i] = ids[b,(i-1) mod T].
kit::ClassBatch previous_token_batch(const TaskShape& s, int64_t batch, Generator& gen) {
  kit::ClassBatch b{Tensor({batch, s.seq_len}), Tensor({batch, s.seq_len})};
  for (int64_t r = 0; r < batch; ++r)
    for (int64_t i = 0; i < s.seq_len; ++i)
      b.ids[r * s.seq_len + i] = static_cast<real>(gen.randint(s.vocab));
  for (int64_t r = 0; r < batch; ++r)
    for (int64_t i = 0; i < s.seq_len; ++i)
      b.labels[r * s.seq_len + i] = b.ids[r * s.seq_len + (i + s.seq_len - 1) % s.seq_len];
  return b;
}

// One head of attention with no mask and no residual, so the answer has to come through the
// attention weights: x = tok + pos (B,T,d); S = (x W_Q)(x W_K)^T / sqrt(d); out = softmax(S) x W_V;
// logits = out W_O. Tied: the key projection is the query projection itself.
class OneHeadReader : public nn::Module {
 public:
  OneHeadReader(const TaskShape& s, bool tied, Generator& gen)
      : Module(tied ? "TiedReader" : "UntiedReader"), width_(s.width) {
    tok_ = register_module("tok", std::make_shared<nn::Embedding>(s.vocab, s.width, gen));
    pos_ = register_module(
        "pos", std::make_shared<nn::LearnedPositionalEmbedding>(s.seq_len, s.width, gen));
    q_ = register_module("q_proj", std::make_shared<nn::Linear>(s.width, s.width, false, gen));
    k_ = tied ? q_
              : register_module("k_proj",
                                std::make_shared<nn::Linear>(s.width, s.width, false, gen));
    v_ = register_module("v_proj", std::make_shared<nn::Linear>(s.width, s.width, false, gen));
    out_ = register_module("out", std::make_shared<nn::Linear>(s.width, s.vocab, true, gen));
  }

  // ids (B,T) -> scores (B,T,T), before the softmax.
  Var scores(const Tensor& ids) const { return scores_of(embed(ids)); }

  // ids (B,T) -> logits (B,T,V); the attention weights of the call are kept in last_weights.
  Var forward(const Tensor& ids) {
    const Var x = embed(ids);
    const Var a = softmax(scores_of(x));
    last_weights = a.value();
    return out_->forward(matmul(a, v_->forward(x)));
  }

  Tensor last_weights;  // (B,T,T)

 private:
  Var embed(const Tensor& ids) const { return pos_->forward(tok_->forward(ids)); }  // (B,T,d)
  // x (B,T,d) -> (x W_Q)(x W_K)^T / sqrt(d) (B,T,T).
  Var scores_of(const Var& x) const {
    const real scale = 1 / std::sqrt(static_cast<real>(width_));
    return matmul(q_->forward(x), k_->forward(x), false, true, scale);
  }

  int64_t width_;
  std::shared_ptr<nn::Embedding> tok_;
  std::shared_ptr<nn::LearnedPositionalEmbedding> pos_;
  std::shared_ptr<nn::Linear> q_, k_, v_, out_;
};

// Accuracy, the mean weight on i-1 and on i, and the asymmetry of the scores, on `batch`.
TiedVariantResult evaluate(OneHeadReader& model, const kit::ClassBatch& b, int64_t t) {
  NoGrad off;
  TiedVariantResult r;
  r.accuracy = kit::accuracy(model.forward(b.ids).value(), b.labels);
  const Tensor& w = model.last_weights;
  const int64_t rows = w.numel() / t;
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t i = row % t;
    r.previous_mass += w[row * t + (i + t - 1) % t] / static_cast<double>(rows);
    r.self_mass += w[row * t + i] / static_cast<double>(rows);
  }
  const Tensor s = model.scores(b.ids).value();
  double largest = 0, skew = 0;
  for (int64_t m = 0; m < s.numel() / (t * t); ++m) {
    int64_t led = 0;  // positions of sequence m whose score on i-1 beats the one on themselves
    for (int64_t i = 0; i < t; ++i) {
      led += s[(m * t + i) * t + (i + t - 1) % t] > s[(m * t + i) * t + i];
      for (int64_t j = 0; j < t; ++j) {
        const double sij = s[(m * t + i) * t + j], sji = s[(m * t + j) * t + i];
        largest = std::max(largest, std::fabs(sij));
        skew = std::max(skew, std::fabs(sij - sji));
      }
    }
    r.most_led_by_previous = std::max(r.most_led_by_previous, led);
  }
  r.asymmetry = largest > 0 ? skew / largest : 0;
  return r;
}

TiedVariantResult train_variant(
    const TaskShape& s, bool tied, int64_t steps, const kit::ClassBatch& heldout, RunContext& ctx) {
  Generator gen(ctx.seed() + (tied ? 2 : 1));
  OneHeadReader model(s, tied, gen);
  train::FitSettings fs =
      kit::fit_settings(ctx, tied ? "tied W_K = W_Q" : "separate W_Q, W_K", steps);
  fs.batch_size = 64;
  fs.optimizer.lr = 1e-2;
  train::fit(model, fs, [&](const train::BatchPart& part) {
    return kit::class_loss(model, previous_token_batch(s, fs.batch_size, gen), part);
  });
  return evaluate(model, heldout, s.seq_len);
}

}  // namespace

void add_tied_fields(Config& config) {
  config.add_int("tied_steps", 600, "training steps of each previous-token model", {.min = 1})
      .add_int("tied_seq_len", 8, "sequence length of the previous-token task", {.min = 3})
      .add_int("tied_vocab", 16, "vocabulary of the previous-token task", {.min = 2})
      .add_int("tied_width", 32, "width of the previous-token models", {.min = 1});
}

TiedStudy tied_qk_study(const Config& cfg, RunContext& ctx) {
  const TaskShape s{cfg.get_int("tied_seq_len"), cfg.get_int("tied_vocab"),
                    cfg.get_int("tied_width")};
  ctx.section(fmt::format(
      "Trained with W_K = W_Q: the previous-token task (T = {}, vocabulary {}, width {})",
      s.seq_len, s.vocab, s.width));
  Generator data(ctx.seed() + 3);
  const kit::ClassBatch heldout = previous_token_batch(s, 512, data);
  TiedStudy st;
  st.seq_len = s.seq_len;
  st.heldout_tokens = heldout.labels.numel();
  st.untied = train_variant(s, false, cfg.get_int("tied_steps"), heldout, ctx);
  st.tied = train_variant(s, true, cfg.get_int("tied_steps"), heldout, ctx);
  Table t(fmt::format("One head, no mask, {} steps; scored on {} held-out tokens",
                      cfg.get_int("tied_steps"), st.heldout_tokens),
          {"query/key", "accuracy", "weight on i-1", "weight on i", "max|S - S^T| / max|S|",
           "most positions of a sequence scoring i-1 over i"});
  for (const auto& [name, r] :
       {std::pair{"separate W_Q, W_K", &st.untied}, std::pair{"tied W_K = W_Q", &st.tied}})
    t.add_row({name, fixed(r->accuracy, 3), fixed(r->previous_mass, 3), fixed(r->self_mass, 3),
               sig(r->asymmetry, 3), std::to_string(r->most_led_by_previous)});
  ctx.table(t);
  kit::record(ctx, {{"tied_accuracy", st.tied.accuracy},
                    {"untied_accuracy", st.untied.accuracy},
                    {"tied_previous_mass", st.tied.previous_mass},
                    {"untied_previous_mass", st.untied.previous_mass},
                    {"tied_self_mass", st.tied.self_mass},
                    {"tied_most_led_by_previous", st.tied.most_led_by_previous},
                    {"untied_most_led_by_previous", st.untied.most_led_by_previous},
                    {"tied_score_asymmetry", st.tied.asymmetry},
                    {"untied_score_asymmetry", st.untied.asymmetry}});
  return st;
}

void tied_qk_rows(const TiedStudy& s, DocumentComparison& cmp) {
  // float32 rounding of two matmuls of the same operands in another order: far below 1e-4.
  cmp.add_exact("trained with W_K = W_Q: the scores stay symmetric", "yes",
                kit::yes_no(s.tied.asymmetry < 1e-4),
                fmt::format("max|S - S^T| / max|S| = {:.2g} (separate matrices: {:.2g})",
                            s.tied.asymmetry, s.untied.asymmetry));
  // Two standard errors of the difference of two accuracies on n tokens.
  const double noise = 2 * kit::rate_difference_se(s.tied.accuracy, s.untied.accuracy,
                                                   static_cast<double>(s.heldout_tokens));
  cmp.add_exact("the symmetric pattern cannot learn 'read the previous token' (tied below untied)",
                "yes", kit::yes_no(s.untied.accuracy - s.tied.accuracy > noise),
                fmt::format("accuracy {:.3f} tied against {:.3f} untied (2 standard errors "
                            "{:.3f}); in no sequence did the tied scores put i-1 above i at "
                            "more than {} of {} positions (untied: {}), as the cycle argument "
                            "requires",
                            s.tied.accuracy, s.untied.accuracy, noise, s.tied.most_led_by_previous,
                            s.seq_len, s.untied.most_led_by_previous))
      .not_judged_if(
          s.untied.accuracy < 0.9,
          fmt::format("the untied layer did not learn the task ({:.3f})", s.untied.accuracy));
}

}  // namespace attn::experiments
