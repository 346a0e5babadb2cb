// depth-hops [000 "Seeing ≠ Walking"]: does an L-layer Transformer need L >= k layers to follow
// k pointers? A grid of k-hop pointer chasing (data/tasks/recall.h, KHopTask) against the number
// of encoder layers, every cell trained from scratch, accuracy per cell as a heatmap.
//
//   attnlab run depth-hops                        # ~3 min on 2 cores
//   attnlab run depth-hops --hops 1,2,3,4,5 --layers 2,3,4 --seeds 1,2,3
//
// The model reads each pair "a -> b" as ONE slot (E_from[a] + E_to[b]) and the start node as
// one more slot, then runs L pre-norm encoder layers (bidirectional self-attention, one stack,
// so L attention steps in all) and reads the answer from the start slot. One slot per pair
// makes one hop exactly one content lookup: the start slot attends to the slot whose "from" is
// its current node and takes its "to". Read token by token instead, a pair would first have to
// be joined by a layer of its own, which muddles the count (see the guide).
//
// Two predictions beside the document's L >= k:
//  - one lookup per layer (the start slot walks alone): k hops need L = k;
//  - pointer doubling: every pair slot a -> next(a) can look itself up too, so after layer l it
//    knows next^(2^l)(a); the start slot, reading those, can gather 1 + 2 + 4 + ... steps:
//    L layers reach up to 2^L - 1 hops (L = 2: 3 hops, L = 3: 7).
// Which of these a short training finds is what the grid measures.
// Step through: HopModel::forward (below), then nn::TransformerEncoderLayer::forward.
#include "data/stream.h"
#include "data/tasks/recall.h"
#include "experiments/kit/kit.h"
#include "nn/module_list.h"
#include "nn/norms.h"
#include "nn/transformer/encoder_layer.h"

namespace attn::experiments {

namespace {

// Every pair "a -> b" becomes one slot E_from[a] + E_to[b] + E_kind[0]; the start node q becomes
// the last slot E_from[PAD] + E_to[q] + E_kind[1] (q is "where we are", the same space a pair's
// target lives in). L pre-norm encoder layers over the n + 1 slots, a final LayerNorm, and a
// readout of the start slot: logits over the vocabulary. No positions: the pairs are a set.
class HopModel : public nn::Module {
 public:
  HopModel(const nn::TransformerLayerOptions& o, int64_t layers, int64_t vocab, Generator& gen)
      : Module("HopModel") {
    from_emb = register_module("from_emb", std::make_shared<nn::Embedding>(vocab, o.d_model, gen));
    to_emb = register_module("to_emb", std::make_shared<nn::Embedding>(vocab, o.d_model, gen));
    kind_emb = register_module("kind_emb", std::make_shared<nn::Embedding>(2, o.d_model, gen));
    blocks =
        register_module("layers", std::make_shared<nn::ModuleList<nn::TransformerEncoderLayer>>());
    for (int64_t i = 0; i < layers; ++i)
      blocks->append(std::make_shared<nn::TransformerEncoderLayer>(o, gen));
    norm = register_module("norm", std::make_shared<nn::LayerNorm>(o.d_model));
    readout = register_module("readout", std::make_shared<nn::Linear>(o.d_model, vocab, true, gen));
  }
  // from, to, kind (B,S) ids of the slots -> logits (B,V) read from slot S-1 (the start node).
  Var forward(const Tensor& from, const Tensor& to, const Tensor& kind) {
    Var x = add(add(from_emb->forward(from), to_emb->forward(to)), kind_emb->forward(kind));
    for (size_t i = 0; i < blocks->size(); ++i) x = (*blocks)[i].forward(x);  // (B,S,d)
    const int64_t s = x.size(1);
    return readout->forward(norm->forward(reshape(slice(x, 1, s - 1, s), {x.size(0), x.size(2)})));
  }
  std::shared_ptr<nn::Embedding> from_emb, to_emb, kind_emb;
  std::shared_ptr<nn::ModuleList<nn::TransformerEncoderLayer>> blocks;
  std::shared_ptr<nn::LayerNorm> norm;
  std::shared_ptr<nn::Linear> readout;
};

// The slots of a batch of k-hop examples (src = a1 b1 ... an bn ? q) and the answers.
struct Batch {
  Tensor from, to, kind, labels;  // (B,S) x 3 with S = n + 1, and (B)
  Var logits(HopModel& m) const { return m.forward(from, to, kind); }
};

Batch collate(const std::vector<data::Example>& xs) {
  const auto b = static_cast<int64_t>(xs.size());
  const auto n = (static_cast<int64_t>(xs[0].src.size()) - 2) / 2;  // pairs
  const int64_t s = n + 1;
  Batch out{Tensor({b, s}), Tensor({b, s}), Tensor::zeros({b, s}), Tensor({b})};
  for (int64_t r = 0; r < b; ++r) {
    const auto& src = xs[static_cast<size_t>(r)].src;
    for (int64_t i = 0; i < n; ++i) {
      out.from[r * s + i] = static_cast<real>(src[2 * i]);
      out.to[r * s + i] = static_cast<real>(src[2 * i + 1]);
    }
    out.from[r * s + n] = static_cast<real>(data::kPad);
    out.to[r * s + n] = static_cast<real>(src.back());
    out.kind[r * s + n] = 1;
    out.labels[r] = static_cast<real>(xs[static_cast<size_t>(r)].label);
  }
  return out;
}

double accuracy(HopModel& model, const Batch& b) {
  NoGrad off;
  model.eval();
  const double a = kit::accuracy(b.logits(model).value(), b.labels);
  model.train();
  return a;
}

struct CellRun {
  double accuracy = 0;  // held-out, at the end
  int64_t steps = 0;    // steps taken (fewer than the budget when the target was reached)
  double seconds = 0;
};

// One cell: a fresh model of `layers` layers trained on `hops`-hop chasing.
CellRun train_cell(
    const Config& cfg, const RunContext& ctx, int64_t hops, int64_t layers, uint64_t seed) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto task = std::make_shared<data::KHopTask>(
      data::KHopTask::Config{.num_nodes = cfg.get_int("nodes"), .hops = hops});
  nn::TransformerLayerOptions o;
  o.d_model = cfg.get_int("d_model");
  o.nhead = cfg.get_int("nhead");
  o.dim_feedforward = cfg.get_int("dim_ff");
  o.dropout = 0;
  o.norm_first = true;  // pre-norm: trains at every depth without a long warm-up
  Generator init(seed * 7919 + static_cast<uint64_t>(hops * 10 + layers));
  HopModel model(o, layers, task->tokenizer().vocab_size(), init);
  data::ExampleStream stream(task, seed * 1000 + 1);
  const Batch heldout =
      collate(data::make_heldout(*task, cfg.get_int("eval_size"), seed * 1000 + 2));
  train::FitSettings fs = kit::fit_settings(
      ctx, fmt::format("hops {} layers {} seed {}", hops, layers, seed), read_optimizer(cfg));
  const int64_t batch = fs.batch_size;
  fs.eval_every = cfg.get_int("eval_every");
  fs.target_metric = "accuracy";
  fs.target_value = cfg.get_real("target");
  const train::TrainResult tr = train::fit(
      model, fs,
      [&](const train::BatchPart& part) {
        const Batch b = collate(part.items(stream.next(batch)));
        return train::StepLoss{cross_entropy(b.logits(model), b.labels)};
      },
      [&](int64_t) {
        return train::Metrics{{"accuracy", accuracy(model, heldout)}};
      });
  return {tr.final_eval.at("accuracy"), tr.last_step,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
}

// The fewest layers whose mean accuracy reaches `solved` for column h, or -1.
int64_t fewest_layers(const Tensor& mean,
                      const std::vector<int64_t>& layers,
                      int64_t h,
                      double solved) {
  const int64_t nh = mean.size(1);
  for (size_t l = 0; l < layers.size(); ++l)
    if (mean[static_cast<int64_t>(l) * nh + h] >= solved) return layers[l];
  return -1;
}

// The smallest L with 2^L - 1 >= k: pointer doubling (see the top of the file).
int64_t doubling_layers(int64_t k) {
  int64_t l = 1;
  while ((int64_t{1} << l) - 1 < k) ++l;
  return l;
}

double best_in_column(const Tensor& mean, int64_t h) {
  const int64_t nl = mean.size(0), nh = mean.size(1);
  double b = 0;
  for (int64_t l = 0; l < nl; ++l) b = std::max(b, static_cast<double>(mean[l * nh + h]));
  return b;
}

std::string layers_text(int64_t l) {
  return l < 0 ? std::string("none in the grid") : std::to_string(l);
}

// Every cell of the grid (layers x hops), trained from scratch once per seed: the mean held-out
// accuracy per cell, (L, K). Each cell's runs also go to cells.csv and results.json. The runs
// are independent (each its own generators), so they train side by side, one core each.
Tensor train_grid(const Config& cfg, RunContext& ctx) {
  const std::vector<int64_t> hops = cfg.get_ints("hops"), layers = cfg.get_ints("layers"),
                             seeds = cfg.get_ints("seeds");
  const auto nh = static_cast<int64_t>(hops.size()), nl = static_cast<int64_t>(layers.size());
  const auto ns = static_cast<int64_t>(seeds.size());
  // Run i is layers[i / (nh ns)], hops[(i / ns) % nh], seeds[i % ns].
  const std::vector<CellRun> runs =
      kit::side_by_side(static_cast<size_t>(nl * nh * ns), [&](size_t i) {
        const auto r = static_cast<int64_t>(i);
        return train_cell(cfg, ctx, hops[(r / ns) % nh], layers[r / (nh * ns)],
                          static_cast<uint64_t>(seeds[r % ns]));
      });
  Tensor mean = Tensor::zeros({nl, nh});
  CsvWriter log = ctx.csv("cells", {"hops", "layers", "seed", "accuracy", "steps", "seconds"});
  nlohmann::ordered_json cells = nlohmann::ordered_json::array();
  for (int64_t l = 0; l < nl; ++l)
    for (int64_t h = 0; h < nh; ++h) {
      std::vector<double> accs;
      std::vector<int64_t> steps;
      for (int64_t s = 0; s < ns; ++s) {
        const CellRun& c = runs[static_cast<size_t>((l * nh + h) * ns + s)];
        accs.push_back(c.accuracy);
        steps.push_back(c.steps);
        log.row({static_cast<double>(hops[h]), static_cast<double>(layers[l]),
                 static_cast<double>(seeds[s]), c.accuracy, static_cast<double>(c.steps),
                 c.seconds});
      }
      const double m = kit::mean_of(accs);
      mean[l * nh + h] = static_cast<real>(m);
      cells.push_back({{"hops", hops[h]},
                       {"layers", layers[l]},
                       {"accuracy", accs},
                       {"mean_accuracy", m},
                       {"steps", steps}});
    }
  ctx.result("cells", cells);
  return mean;
}

void report_grid(const Config& cfg, const Tensor& mean, RunContext& ctx) {
  std::vector<std::string> hop_labels, layer_labels;
  for (int64_t k : cfg.get_ints("hops"))
    hop_labels.push_back(fmt::format("{} hop{}", k, k == 1 ? "" : "s"));
  for (int64_t l : cfg.get_ints("layers")) layer_labels.push_back(fmt::format("L = {}", l));
  ctx.matrix("mean_accuracy", mean, layer_labels, hop_labels);
  const Heatmap hm{
      .values = mean,
      .row_labels = layer_labels,
      .col_labels = hop_labels,
      .title = fmt::format("Held-out accuracy, mean of {} seed(s)", cfg.get_ints("seeds").size()),
      .x_label = "pointer steps k",
      .y_label = "encoder layers",
      .colorbar_label = "accuracy",
      .vmin = 0,
      .vmax = 1,
      .annotate = true};
  ctx.figure("accuracy_grid", heatmap_svg(hm),
             "Each cell: a model of L layers trained from scratch on k-hop chasing. The document "
             "predicts a staircase on the diagonal (L >= k solves).");
  // ---- the fewest layers per hop count, beside the two predictions ----
  const double solved = cfg.get_real("solved");
  const std::vector<int64_t> hops = cfg.get_ints("hops");
  Table t(fmt::format("Fewest layers reaching mean accuracy {:.2f}", solved),
          {"hops k", "document: L = k", "pointer doubling: 2^L - 1 >= k", "measured"});
  nlohmann::ordered_json fewest = nlohmann::ordered_json::array();
  for (size_t h = 0; h < hops.size(); ++h) {
    const int64_t f = fewest_layers(mean, cfg.get_ints("layers"), static_cast<int64_t>(h), solved);
    t.add_row({std::to_string(hops[h]), std::to_string(hops[h]),
               std::to_string(doubling_layers(hops[h])), layers_text(f)});
    fewest.push_back({{"hops", hops[h]}, {"fewest_layers", f}});
  }
  ctx.table(t);
  ctx.result("fewest_layers", fewest);
}

// Why the fewest layers that solve k hops is not k, when it is not.
std::string why_not_k(const Config& cfg, const Tensor& mean, int64_t h, int64_t f, int64_t k) {
  const double solved = cfg.get_real("solved");
  if (f < 0)
    return fmt::format(
        "no depth in the grid reached {:.2f} within {} steps per cell (the best mean accuracy "
        "is {:.3f}): the step budget, not only depth, limits this column; try a larger --steps",
        solved, cfg.get_int("steps"), best_in_column(mean, h));
  if (f > k)
    return fmt::format(
        "with {} layer(s) or fewer the mean accuracy stays below {:.2f} (chance about {:.3f}): "
        "the training budget (--steps) did not find the lookups at that depth",
        f - 1, solved, 1.0 / static_cast<double>(cfg.get_int("nodes") - 1));
  if (f < k)
    return fmt::format(
        "fewer layers than hops: the pair slots follow their own pointers in parallel (next, "
        "next^2, next^4, ...), so L layers can reach up to 2^L - 1 hops");
  return "";
}

void compare_with_document(const Config& cfg, const Tensor& mean, RunContext& ctx) {
  const std::vector<int64_t> hops = cfg.get_ints("hops"), layers = cfg.get_ints("layers");
  const auto nh = static_cast<int64_t>(hops.size()), nl = static_cast<int64_t>(layers.size());
  const double solved = cfg.get_real("solved");
  DocumentComparison cmp(
      fmt::format("000 \"Seeing ≠ Walking\" vs ours (solved = mean accuracy >= {:.2f})", solved));
  for (int64_t h = 0; h < nh; ++h) {
    const int64_t f = fewest_layers(mean, layers, h, solved), k = hops[h];
    cmp.add_exact(
        fmt::format("{} hop{}: the fewest layers that solve it is k", k, k == 1 ? "" : "s"),
        std::to_string(k), layers_text(f), why_not_k(cfg, mean, h, f, k));
  }
  // The claim's other half: depth is necessary. A cell with fewer layers than hops is solved only
  // if the model found something better than one lookup per layer (pointer doubling).
  int64_t shallow_solved = 0, shallow_cells = 0;
  double shallow_best = 0;
  for (int64_t l = 0; l < nl; ++l)
    for (int64_t h = 0; h < nh; ++h)
      if (layers[l] < hops[h]) {
        ++shallow_cells;
        shallow_solved += mean[l * nh + h] >= solved;
        shallow_best = std::max(shallow_best, static_cast<double>(mean[l * nh + h]));
      }
  ctx.result("shallow_cells_solved", shallow_solved);
  ctx.result("shallow_best_accuracy", shallow_best);
  if (shallow_cells > 0)
    cmp.add_exact(
        "no model with fewer layers than hops solves it (L < k fails)", "yes",
        kit::yes_no(shallow_solved == 0),
        fmt::format(
            "{} of {} cells with L < k solved; best accuracy among them {:.3f}{}", shallow_solved,
            shallow_cells, shallow_best,
            shallow_solved == 0 ? "" : ": pointer doubling lets L layers reach 2^L - 1 hops"));
  ctx.compare(cmp);
}

void run(const Config& cfg, RunContext& ctx) {
  ctx.section(fmt::format("k-hop pointer chasing: {} nodes, {} seed(s) per cell",
                          cfg.get_int("nodes"), cfg.get_ints("seeds").size()));
  ctx.note(fmt::format(
      "Each cell trains a fresh encoder of L pre-norm layers (d_model {}, {} heads) over one "
      "slot per pair and one for the start node, for at most {} steps of {} examples, stopping "
      "early once held-out accuracy reaches {:.2f}; accuracy is measured on {} held-out "
      "examples.",
      cfg.get_int("d_model"), cfg.get_int("nhead"), cfg.get_int("steps"), cfg.get_int("batch_size"),
      cfg.get_real("target"), cfg.get_int("eval_size")));
  const Tensor mean = train_grid(cfg, ctx);
  report_grid(cfg, mean, ctx);
  ctx.result("chance", 1.0 / static_cast<double>(cfg.get_int("nodes") - 1));
  compare_with_document(cfg, mean, ctx);
}

}  // namespace

Experiment depth_hops() {
  Experiment e;
  e.name = "depth-hops";
  e.source = "000 \"Seeing ≠ Walking\" (L layers, L steps)";
  e.purpose = "k-hop pointer chasing against depth: how many layers does k hops take?";
  e.config.add_ints("hops", {1, 2, 3, 4}, "pointer steps k (columns of the grid)", {.min = 1})
      .add_ints("layers", {1, 2, 3, 4}, "encoder layers L (rows of the grid)", {.min = 1})
      .add_ints("seeds", {1}, "seeds per cell (the map shows their mean)", {.min = 0})
      .add_int("nodes", 5, "nodes per example, each pointing to another", {.min = 2, .max = 26})
      .add_real("solved", 0.9, "mean accuracy counted as solved", {.min = 0, .max = 1});
  add_model_fields(e.config, {.d_model = 64, .nhead = 4, .dim_ff = 128});
  add_optimizer_fields(e.config, {.steps = 2500,
                                  .batch_size = 64,
                                  .lr = 3e-3,
                                  .schedule = "cosine",
                                  .warmup = 100,
                                  .clip = 1.0});
  add_eval_fields(e.config, {.eval_size = 500, .eval_every = 100, .target = 0.99});
  e.quick = {{"hops", "1,2"},  {"layers", "1,2"},    {"seeds", "1"},      {"steps", "300"},
             {"warmup", "30"}, {"eval_every", "50"}, {"eval_size", "200"}};
  e.check = [](const Config& c) {
    require_divides(c, "nhead", "d_model");
    if (c.get_int("steps") <= c.get_int("warmup"))
      throw UsageError(fmt::format("depth-hops: --steps ({}) must exceed --warmup ({})",
                                   c.get_int("steps"), c.get_int("warmup")));
  };
  e.run = run;
  return e;
}

}  // namespace attn::experiments
