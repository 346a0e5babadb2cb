#include "experiments/basics/causal_generation.h"

#include "experiments/kit/kit.h"
#include "experiments/kit/spread.h"
#include "nn/transformer/decoder_only.h"

namespace attn::experiments {

namespace {

constexpr int64_t kVocab = 16, kLength = 16, kPrompt = 2, kStrides = 3;

// n progressions x_t = (s + r t) mod V: the first kLength tokens as input, the next-token
// targets, the stride class r - 1, and the whole kLength + 1 tokens for generation checks.
struct Progressions {
  Tensor inputs, next, stride;  // (n,T), (n,T), (n)
  std::vector<std::vector<int64_t>> tokens;
};

Progressions draw(int64_t n, Generator& gen) {
  Progressions p{Tensor({n, kLength}), Tensor({n, kLength}), Tensor({n}), {}};
  for (int64_t b = 0; b < n; ++b) {
    const int64_t start = gen.randint(kVocab), stride = 1 + gen.randint(kStrides);
    std::vector<int64_t> row;
    for (int64_t t = 0; t <= kLength; ++t) row.push_back((start + stride * t) % kVocab);
    for (int64_t t = 0; t < kLength; ++t) {
      p.inputs.data()[b * kLength + t] = static_cast<real>(row[t]);
      p.next.data()[b * kLength + t] = static_cast<real>(row[t + 1]);
    }
    p.stride.data()[b] = static_cast<real>(stride - 1);
    p.tokens.push_back(std::move(row));
  }
  return p;
}

nn::DecoderOnlyTransformer make_model(const Config& cfg, bool causal, Generator& gen) {
  nn::DecoderOnlyOptions o;
  o.vocab_size = kVocab, o.max_len = kLength, o.num_layers = 2, o.nhead = 2, o.dropout = 0;
  o.d_model = cfg.get_int("gen_d_model"), o.dim_feedforward = 2 * o.d_model;
  o.causal = causal;
  return nn::DecoderOnlyTransformer(o, gen);
}

// logits (B,T,V) at position t: (B,V).
Var at_position(const Var& logits, int64_t t) {
  return reshape(slice(logits, 1, t, t + 1), {logits.size(0), kVocab});
}

// The stride read at position 0 (classes 0..2 of the V logits there).
Var stride_logits(nn::DecoderOnlyTransformer& m, const Tensor& ids) {
  return slice(at_position(m.forward(ids), 0), 1, 0, kStrides);
}

struct LmScores {
  double first = 0, rest = 0;  // teacher-forced accuracy at position 0, and at 1..T-1
  double generated = 0;        // exact match of the T + 1 - kPrompt generated tokens
};

LmScores score_lm(nn::DecoderOnlyTransformer& m, const Progressions& held) {
  m.eval();
  LmScores s;
  {
    NoGrad off;
    const Var logits = m.forward(held.inputs), next = Var::constant(held.next);
    s.first = kit::accuracy(at_position(logits, 0).value(), slice(next, 1, 0, 1).value());
    s.rest =
        kit::accuracy(slice(logits, 1, 1, kLength).value(), slice(next, 1, 1, kLength).value());
  }
  // Generation recomputes the whole prefix each token (a two-sided model has no KV cache).
  Tensor prompt({held.inputs.size(0), kPrompt});
  std::vector<std::vector<int64_t>> expected, answers;
  for (int64_t b = 0; b < held.inputs.size(0); ++b) {
    for (int64_t t = 0; t < kPrompt; ++t) prompt.data()[b * kPrompt + t] = held.inputs.at({b, t});
    expected.emplace_back(held.tokens[b].begin() + kPrompt, held.tokens[b].end() - 1);
  }
  Generator unused(0);
  const Tensor out = m.generate(prompt, kLength - kPrompt, {}, unused, std::nullopt, false);
  for (int64_t b = 0; b < out.size(0); ++b) {
    std::vector<int64_t> row;
    for (int64_t t = kPrompt; t < kLength; ++t) row.push_back(static_cast<int64_t>(out.at({b, t})));
    answers.push_back(std::move(row));
  }
  s.generated = kit::exact_match(answers, expected);
  m.train();
  return s;
}

train::FitSettings settings(const Config& cfg, const RunContext& ctx, const std::string& name) {
  train::FitSettings s = kit::fit_settings(ctx, name, cfg.get_int("gen_steps"));
  s.batch_size = 32;
  s.optimizer.lr = 3e-3;
  return s;
}

LmScores train_lm(const Config& cfg, const RunContext& ctx, bool causal, const Progressions& held) {
  Generator init(ctx.seed() + (causal ? 1 : 2)), data(ctx.seed() + 3);
  nn::DecoderOnlyTransformer m = make_model(cfg, causal, init);
  train::fit(
      m, settings(cfg, ctx, causal ? "LM, causal" : "LM, two-sided"),
      [&](const train::BatchPart& part) {
        const Progressions b = draw(32, data);
        return train::StepLoss{cross_entropy(m.forward(part.rows(b.inputs)), part.rows(b.next))};
      });
  return score_lm(m, held);
}

double train_classifier(const Config& cfg,
                        const RunContext& ctx,
                        bool causal,
                        const Progressions& held) {
  Generator init(ctx.seed() + (causal ? 4 : 5)), data(ctx.seed() + 6);
  nn::DecoderOnlyTransformer m = make_model(cfg, causal, init);
  train::fit(m, settings(cfg, ctx, causal ? "classifier, causal" : "classifier, two-sided"),
             [&](const train::BatchPart& part) {
               const Progressions b = draw(32, data);
               return train::StepLoss{
                   cross_entropy(stride_logits(m, part.rows(b.inputs)), part.rows(b.stride))};
             });
  m.eval();
  NoGrad off;
  const double a = kit::accuracy(stride_logits(m, held.inputs).value(), held.stride);
  m.train();
  return a;
}

}  // namespace

void add_causal_generation_fields(Config& config) {
  config
      .add_int("gen_steps", 400, "training steps of each Check Your Understanding 2 model",
               {.min = 1})
      .add_int("gen_d_model", 32, "width of those models", {.min = 2})
      .add_int("gen_eval", 500, "held-out progressions they are scored on", {.min = 1});
}

void causal_generation(const Config& cfg, RunContext& ctx) {
  ctx.section("003 Check Your Understanding 2: generating needs the mask, classifying does not");
  Generator held_gen(ctx.seed() + 7);
  const Progressions held = draw(cfg.get_int("gen_eval"), held_gen);
  const double n = static_cast<double>(held.inputs.size(0)), guess = 1.0 / kStrides;
  const LmScores causal = train_lm(cfg, ctx, true, held), two = train_lm(cfg, ctx, false, held);
  const double cls_causal = train_classifier(cfg, ctx, true, held);
  const double cls_two = train_classifier(cfg, ctx, false, held);

  Table tab(fmt::format("Progressions mod {} ({} held out), trained {} steps each", kVocab,
                        held.inputs.size(0), cfg.get_int("gen_steps")),
            {"model", "teacher-forced, position 0", "teacher-forced, positions 1+",
             "generated from 2 tokens (exact)", "stride read at position 0"});
  tab.add_row({"causal mask", fixed(causal.first, 3), fixed(causal.rest, 3),
               fixed(causal.generated, 3), fixed(cls_causal, 3)});
  tab.add_row({"no mask (two-sided)", fixed(two.first, 3), fixed(two.rest, 3),
               fixed(two.generated, 3), fixed(cls_two, 3)});
  ctx.table(tab);
  kit::record(ctx, {{"lm_causal_first", causal.first},
                    {"lm_causal_rest", causal.rest},
                    {"lm_causal_generated", causal.generated},
                    {"lm_two_sided_first", two.first},
                    {"lm_two_sided_rest", two.rest},
                    {"lm_two_sided_generated", two.generated},
                    {"classifier_causal", cls_causal},
                    {"classifier_two_sided", cls_two}});

  // Two rates differ beyond chance when the gap exceeds 2 standard errors on n sequences.
  auto beyond = [&](double a, double b) { return a - b > 2 * kit::rate_difference_se(a, b, n); };
  DocumentComparison cmp("003 Check Your Understanding 2: the causal mask, measured");
  cmp.add_exact(
         "without the mask an LM sees the token it must predict: right at position 0 "
         "beyond the 1/3 a causal model can reach",
         "yes", kit::yes_no(beyond(two.first, guess)),
         fmt::format("position 0: two-sided {:.3f}, causal {:.3f}", two.first, causal.first))
      .needs_training(causal.rest, guess);
  cmp.add_exact(
         "generation needs the mask: the two-sided LM cannot continue a prompt the causal "
         "LM continues",
         "yes", kit::yes_no(beyond(causal.generated, two.generated)),
         fmt::format("exact continuations: causal {:.3f}, two-sided {:.3f}", causal.generated,
                     two.generated))
      .needs_training(causal.rest, guess);
  cmp.add_exact("classification needs no mask: the two-sided classifier is at least as accurate",
                "yes", kit::yes_no(!beyond(cls_causal, cls_two)),
                fmt::format("stride read at position 0: two-sided {:.3f}, causal {:.3f} (it sees "
                            "one token there)",
                            cls_two, cls_causal))
      .needs_training(cls_two, guess + 2 * kit::rate_difference_se(guess, guess, n));
  ctx.compare(cmp);
}

}  // namespace attn::experiments
