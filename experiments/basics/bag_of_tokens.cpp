// bag-of-tokens: a model that averages its token embeddings cannot see order. With the same
// data and the same training it learns "which bit is in the majority" and stays at chance on
// "what is the first bit". (The worked example of docs/adding-an-experiment.md.)
//
//   attnlab run bag-of-tokens              # under a second
//   attnlab run bag-of-tokens --length 15 --steps 800
#include "experiments/kit/kit.h"  // fmt, tensors, Linear, Embedding, fit, reports, ...

namespace attn::experiments {
namespace {

// ids (B,T) of bits -> logits (B,2): the mean of the token embeddings, then a linear readout.
class BagOfTokens : public nn::Module {
 public:
  BagOfTokens(int64_t d_model, Generator& gen) : Module("BagOfTokens") {
    emb = register_module("emb", std::make_shared<nn::Embedding>(2, d_model, gen));
    out = register_module("out", std::make_shared<nn::Linear>(d_model, 2, true, gen));
  }
  Var forward(const Tensor& ids) { return out->forward(mean(emb->forward(ids), 1)); }
  std::shared_ptr<nn::Embedding> emb;
  std::shared_ptr<nn::Linear> out;
};

struct Batch {
  Tensor ids, labels;  // (B,T) bits, (B) the answer
};

// n strings. Majority: t random bits (t odd), labelled with the majority bit. First: t + 1 bits,
// exactly half of them ones (so every string is the same bag), labelled with the first bit.
Batch draw(int64_t n, int64_t t, bool majority, Generator& gen) {
  const int64_t len = majority ? t : t + 1;
  Batch b{Tensor({n, len}), Tensor({n})};
  std::vector<real> bits(static_cast<size_t>(len));
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t i = 0; i < len; ++i) bits[i] = majority ? gen.randint(2) : (2 * i < len);
    if (!majority)  // a random order of the balanced bag (Fisher-Yates)
      for (int64_t i = len - 1; i > 0; --i) std::swap(bits[i], bits[gen.randint(i + 1)]);
    real ones = 0;
    for (int64_t i = 0; i < len; ++i) {
      b.ids[r * len + i] = bits[i];
      ones += bits[i];
    }
    b.labels[r] = majority ? static_cast<real>(2 * ones > len) : bits[0];
  }
  return b;
}

struct Curve {
  std::vector<double> steps, accuracy;  // at every evaluation
};

// Trains a fresh model on one task, evaluating on held-out strings.
Curve train_on(const Config& cfg, const RunContext& ctx, bool majority) {
  const int64_t t = cfg.get_int("length");
  Generator init(ctx.seed()), data(ctx.seed() * 2 + (majority ? 1 : 0));
  BagOfTokens model(read_model(cfg).d_model, init);
  const Batch heldout = draw(read_eval(cfg).eval_size, t, majority, data);
  train::FitSettings s =
      kit::fit_settings(ctx, majority ? "majority" : "first", read_optimizer(cfg));
  s.eval_every = read_eval(cfg).eval_every;
  const train::TrainResult r = train::fit(
      model, s,
      [&](const train::BatchPart& part) {  // the whole batch on every rank, this rank's rows
        const Batch b = draw(s.batch_size, t, majority, data);
        return train::StepLoss{cross_entropy(model.forward(part.rows(b.ids)), part.rows(b.labels))};
      },
      [&](int64_t) {
        NoGrad off;
        const Tensor logits = model.forward(heldout.ids).value();
        return train::Metrics{{"accuracy", kit::accuracy(logits, heldout.labels)}};
      });
  Curve c;
  for (const auto& [step, m] : r.evals) {
    c.steps.push_back(static_cast<double>(step));
    c.accuracy.push_back(m.at("accuracy"));
  }
  return c;
}

void run(const Config& cfg, RunContext& ctx) {
  const Curve majority = train_on(cfg, ctx, true), first = train_on(cfg, ctx, false);
  const double acc_majority = majority.accuracy.back(), acc_first = first.accuracy.back();
  ctx.result("accuracy_majority", acc_majority);
  ctx.result("accuracy_first", acc_first);

  LinePlot p;
  p.series = {{"majority bit", majority.steps, majority.accuracy},
              {"first bit", first.steps, first.accuracy}};
  p.refs = {{RefLine::kHorizontal, 0.5, "chance"}};
  p.x_label = "step";
  p.y_label = "held-out accuracy";
  ctx.figure("accuracy", line_plot_svg(p), "One model, one training, two tasks");

  // A rate from n held-out examples has a standard error of at most 0.5 / sqrt(n).
  const int64_t n = cfg.get_int("eval_size");
  const double three_se = 3 * 0.5 / std::sqrt(static_cast<double>(n));
  DocumentComparison cmp("Order-blind model vs ours");
  cmp.add("majority bit: held-out accuracy", 1.0, acc_majority, three_se);
  cmp.add("first bit: held-out accuracy (chance)", 0.5, acc_first, three_se)
      .needs_training(acc_majority, 0.5 + three_se, "majority accuracy")
      .needs_samples(n, 100);
  ctx.compare(cmp);
}

}  // namespace

Experiment bag_of_tokens() {
  Experiment e;
  e.name = "bag-of-tokens";
  e.source = "docs/adding-an-experiment.md";
  e.purpose = "Averaged embeddings learn the majority bit but not the first bit";
  e.config.add_int("length", 9, "bits per string (odd: no ties)", {.min = 1, .max = 99});
  add_model_fields(e.config, {.d_model = 8});
  add_optimizer_fields(e.config, {.steps = 400, .batch_size = 64, .lr = 1e-2});
  add_eval_fields(e.config, {.eval_size = 1000, .eval_every = 50});
  e.quick = {{"steps", "50"}, {"eval_size", "200"}};
  e.check = [](const Config& c) {
    if (c.get_int("length") % 2 == 0)
      throw UsageError(fmt::format("bag-of-tokens: --length {} is even (a tie has no majority)",
                                   c.get_int("length")));
  };
  e.run = run;
  return e;
}

}  // namespace attn::experiments
