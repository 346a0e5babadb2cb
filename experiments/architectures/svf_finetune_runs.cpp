// svf-finetune's runs for one seed (svf_finetune_runs.h).
#include "experiments/architectures/svf_finetune_runs.h"

#include "data/tasks/sequence.h"
#include "experiments/architectures/svf_finetune_model.h"
#include "experiments/kit/kit.h"

namespace attn::experiments::svf {

namespace {

// Both tasks share the alphabet and its tokenizer; the string is preceded by a marker naming
// the task: id `vocab` for A, `vocab + 1` for B (the model's table has vocab + 2 rows).
struct Tasks {
  data::SequenceTask a, b;
  int64_t vocab = 0;
};

data::SequenceOp op_of(const std::string& name) {
  if (name == "copy") return data::SequenceOp::kCopy;
  if (name == "sort") return data::SequenceOp::kSort;
  return data::SequenceOp::kReverse;
}

Tasks make_tasks(const Settings& w) {
  const std::string alphabet = std::string("abcdefghijklmnopqrstuvwxyz").substr(0, w.letters);
  auto config = [&](const std::string& op) {
    return data::SequenceTask::Config{op_of(op), w.seq_len, w.seq_len, alphabet};
  };
  data::SequenceTask a(config(w.task_a)), b(config(w.task_b));
  const int64_t vocab = a.tokenizer().vocab_size();
  return {std::move(a), std::move(b), vocab};
}

struct Batch {
  Tensor ids, targets;  // (N, 1 + seq_len): the marker, then the string; the scored answers
  Tensor task;          // (N, 1): 0 for task A, 1 for task B
};
enum class Mix { kA, kB, kBoth };
// kTokens: the answer string is scored (not the marker); kTask: the task is, read at position 0
// as marker B's logit against marker A's (what the first pass's classifier learns).
enum class Target { kTokens, kTask };

Batch draw(const Tasks& t, int64_t n, Mix mix, Generator& gen) {
  const int64_t len = t.a.config().max_len, width = len + 1;
  Batch b{Tensor({n, width}), Tensor({n, width}), Tensor({n, 1})};
  for (int64_t r = 0; r < n; ++r) {
    const int task = mix == Mix::kBoth ? static_cast<int>(gen.randint(2)) : mix == Mix::kB;
    const data::Example ex = (task == 1 ? t.b : t.a).sample(gen);
    b.task[r] = static_cast<real>(task);
    b.ids[r * width] = static_cast<real>(t.vocab + task);
    b.targets[r * width] = static_cast<real>(data::kIgnoreIndex);
    for (int64_t i = 0; i < len; ++i) {
      b.ids[r * width + 1 + i] = static_cast<real>(ex.src[static_cast<size_t>(i)]);
      b.targets[r * width + 1 + i] = static_cast<real>(ex.tgt[static_cast<size_t>(i)]);
    }
  }
  return b;
}

Batch subset(const Batch& b, const std::vector<int64_t>& rows) {
  const int64_t width = b.ids.size(1);
  const int64_t n = static_cast<int64_t>(rows.size());
  Batch s{Tensor({n, width}), Tensor({n, width}), Tensor({n, 1})};
  for (size_t r = 0; r < rows.size(); ++r) {
    s.task[static_cast<int64_t>(r)] = b.task[rows[r]];
    for (int64_t i = 0; i < width; ++i) {
      s.ids[static_cast<int64_t>(r) * width + i] = b.ids[rows[r] * width + i];
      s.targets[static_cast<int64_t>(r) * width + i] = b.targets[rows[r] * width + i];
    }
  }
  return s;
}

void add_accuracy(const TaskModel& m,
                  const LinearRoute& route,
                  const Batch& b,
                  kit::Accuracy& acc) {
  NoGrad off;
  acc.add(m.forward(b.ids, route).value(), b.targets, data::kIgnoreIndex);
}

double accuracy(const TaskModel& m, const LinearRoute& route, const Batch& b) {
  kit::Accuracy acc;
  add_accuracy(m, route, b, acc);
  return acc.value();
}

// Trains `trained` (the model itself, or an adapter whose route the frozen model runs) on
// batches of `mix`, by train::fit.
struct Job {
  std::string name;
  int64_t steps = 0, batch_size = 0;
  double lr = 0;
  Mix mix = Mix::kA;
  Target target = Target::kTokens;
};

void fit_on(const RunContext& ctx,
            const Tasks& t,
            const Job& job,
            nn::Module& trained,
            const TaskModel& model,
            const LinearRoute& route,
            Generator& data) {
  train::FitSettings s = kit::fit_settings(ctx, job.name, job.steps);
  s.batch_size = job.batch_size;
  s.optimizer.lr = job.lr;
  train::fit(trained, s, [&](const train::BatchPart& part) {
    const Batch b = draw(t, s.batch_size, job.mix, data);
    const Var logits = model.forward(part.rows(b.ids), route);
    if (job.target == Target::kTokens)
      return train::StepLoss{cross_entropy(logits, part.rows(b.targets), data::kIgnoreIndex)};
    // (N,1,2): the two markers' logits at position 0, a two-class cross-entropy on the task.
    const Var markers = slice(slice(logits, 1, 0, 1), 2, t.vocab, t.vocab + 2);
    return train::StepLoss{cross_entropy(markers, part.rows(b.task))};
  });
}

MethodOutcome measure(const std::string& name,
                      const nn::Module& trained,
                      const TaskModel& m,
                      const LinearRoute& route,
                      const Batch& held_a,
                      const Batch& held_b) {
  return {name, kit::count_parameters(trained), accuracy(m, route, held_b),
          accuracy(m, route, held_a)};
}

// Transformer²'s inference on the mixed set: single z-vectors, the best fixed mixture found on
// the few-shot set, and the two passes (classify the task, then run under its z).
MixedOutcome mixed_set(const TaskModel& base,
                       const SvfAdapter& svf,
                       const SvfAdapter& classifier,
                       const ZVectors& z_a,
                       const ZVectors& z_b,
                       const Tasks& t,
                       const Batch& held_a,
                       const Batch& held_b,
                       const Batch& few) {
  MixedOutcome m;
  auto on_both = [&](const ZVectors& z) {
    kit::Accuracy acc;
    add_accuracy(base, svf.route_with(z), held_a, acc);
    add_accuracy(base, svf.route_with(z), held_b, acc);
    return acc.value();
  };
  m.only_a = on_both(z_a);
  m.only_b = on_both(z_b);
  double best = -1;
  for (int i = 0; i <= 10; ++i) {  // a = 0, 0.1, ..., 1: the first best on the few-shot set
    const double a = i / 10.0, f = accuracy(base, svf.route_with(mix(z_a, z_b, a)), few);
    if (f > best) best = f, m.alpha = a;
  }
  m.best_mix = on_both(mix(z_a, z_b, m.alpha));
  kit::Accuracy two, oracle;
  int64_t named = 0, total = 0;
  for (int task = 0; task < 2; ++task) {
    const Batch& set = task == 0 ? held_a : held_b;
    NoGrad off;
    const Tensor logits = base.forward(set.ids, classifier.route()).value();  // (N,T,V)
    const int64_t n = set.ids.size(0), width = set.ids.size(1), v = logits.size(2);
    std::vector<int64_t> to_a, to_b;  // the first pass: marker B's logit above marker A's at 0
    for (int64_t r = 0; r < n; ++r) {
      const real* row = logits.data() + r * width * v;
      const bool says_b = row[t.vocab + 1] > row[t.vocab];
      (says_b ? to_b : to_a).push_back(r);
      named += says_b == (task == 1);
    }
    total += n;
    if (!to_a.empty()) add_accuracy(base, svf.route_with(z_a), subset(set, to_a), two);
    if (!to_b.empty()) add_accuracy(base, svf.route_with(z_b), subset(set, to_b), two);
    add_accuracy(base, svf.route_with(task == 0 ? z_a : z_b), set, oracle);
  }
  m.two_pass = two.value();
  m.oracle = oracle.value();
  m.first_pass = static_cast<double>(named) / static_cast<double>(total);
  return m;
}

}  // namespace

SeedOutcome run_seed(const Settings& w, const RunContext& ctx, int64_t seed_index) {
  const uint64_t seed = w.seed + 1000 * static_cast<uint64_t>(seed_index);
  const Tasks t = make_tasks(w);
  Generator init(seed), data(seed * 7 + 1), held(seed * 7 + 2);
  const Batch held_a = draw(t, w.eval_size, Mix::kA, held);
  const Batch held_b = draw(t, w.eval_size, Mix::kB, held);
  const Batch few = draw(t, w.few_shot, Mix::kBoth, held);
  const ModelShape shape{t.vocab + 2,   w.seq_len + 1,      w.model.d_model,
                         w.model.nhead, w.model.num_layers, w.model.dim_ff};
  const std::string tag = fmt::format(" seed {}", seed_index);
  auto job = [&](const std::string& name, Mix mix, Target target = Target::kTokens) {
    const bool base = mix == Mix::kA;
    return Job{
        name + tag,
        base ? w.base.steps : (target == Target::kTask ? w.classifier_steps : w.finetune_steps),
        w.base.batch_size,
        base ? w.base.lr : w.finetune_lr,
        mix,
        target};
  };

  SeedOutcome o;
  TaskModel base(shape, init);
  fit_on(ctx, t, job("base on A", Mix::kA), base, base, {}, data);
  o.base_a = accuracy(base, {}, held_a);
  o.base_b = accuracy(base, {}, held_b);

  TaskModel full(shape, init);  // a trainable copy of the base
  full.load_state_dict(base.state_dict());
  fit_on(ctx, t, job("full on B", Mix::kB), full, full, {}, data);
  o.methods.push_back(measure("full", full, full, {}, held_a, held_b));

  freeze(base);  // from here on only adapters learn
  for (int64_t r : w.lora_ranks) {
    LoraAdapter lora(base, r, init);
    const std::string name = fmt::format("LoRA r={}", r);
    fit_on(ctx, t, job(name + " on B", Mix::kB), lora, base, lora.route(), data);
    o.methods.push_back(measure(name, lora, base, lora.route(), held_a, held_b));
  }
  SvfAdapter svf_b(base);
  fit_on(ctx, t, job("SVF on B", Mix::kB), svf_b, base, svf_b.route(), data);
  o.methods.push_back(measure("SVF", svf_b, base, svf_b.route(), held_a, held_b));
  for (const auto& l : base.adapted_linears())
    o.svf_expected += std::min(l->in_features(), l->out_features());

  SvfAdapter classifier(base);
  fit_on(ctx, t, job("SVF task classifier", Mix::kBoth, Target::kTask), classifier, base,
         classifier.route(), data);
  o.mixed =
      mixed_set(base, svf_b, classifier, svf_b.ones(), svf_b.z_values(), t, held_a, held_b, few);
  return o;
}

}  // namespace attn::experiments::svf
