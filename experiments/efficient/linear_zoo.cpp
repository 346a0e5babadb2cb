// linear-zoo [004 §0x04 4.1-4.2]: the survey's members attention-zoo lacks — atrous (dilated)
// attention and Longformer's local + dilated heads, PolaFormer's polarity-aware linear
// attention, TransNormer (local attention below, normalised linear attention above), a SANA
// block (linear attention, a convolutional Mix-FFN, no positions), AWRSR's simple and additive
// attention-weight refinement — beside softmax and plain linear attention (elu + 1), in
// attention-zoo's model body, tasks and timing (attention_zoo_parts.h).
//
//   attnlab run linear-zoo
//   attnlab run linear-zoo --variants softmax,linear,polaformer --recall_steps 1000
//
// Parts:
//   1. accuracy on recall and the long-range task (attention-zoo's part 1), and the rows each
//      trained recall model applies: their entropy and largest weight (PolaFormer's claim);
//   2. time per training step and peak memory against T (attention-zoo's part 2);
//   3. the mechanisms' own measurements: how far one dilated layer reaches (gradients), and
//      linear attention without positions beside SANA (which has none).
// Step through: nn::PolarityAttention::forward (the two streams), nn::causal_kernel_sums (the
// denominator-free prefix sums), nn::SanaBlock::forward, nn::RefinedAttention::weights.
#include "experiments/kit/kit.h"

#include <optional>

#include "experiments/common/distribution.h"
#include "experiments/efficient/attention_zoo_parts.h"
#include "experiments/efficient/linear_zoo_claims.h"
#include "experiments/kit/classifier_steps.h"
#include "nn/attention/dilated_attention.h"
#include "nn/attention/linear_attention.h"
#include "nn/attention/multihead_attention.h"
#include "nn/attention/polarity_attention.h"
#include "nn/attention/refined_attention.h"
#include "nn/attention/sana_block.h"

namespace attn::experiments {

namespace {

using zoo::Accuracies, zoo::Costs, zoo::RowStats, zoo::Reach, zoo::NoPositions, zoo::MixerTap;

std::vector<ZooVariant> all_variants() {
  std::vector<ZooVariant> v{zoo_projection_variants().front()};  // softmax, the baseline
  for (ZooVariant& r : zoo_linear_variants()) v.push_back(std::move(r));
  return v;
}

// ---- part 1's probe: the rows a trained layer applies ------------------------------------------

// The (B,H,T,T) rows layer m applies to its input x, or nothing when it has no normalised rows
// (TransNormer's layers: the window's banded kernel, the denominator-free sums).
std::optional<Var> applied_rows(nn::Module& m, const Var& x) {
  if (auto* a = dynamic_cast<nn::MultiheadAttention*>(&m))
    return a->forward(x, x, x, nn::AttentionMasks{.causal = true}).weights;
  if (const auto* a = dynamic_cast<const nn::PolarityAttention*>(&m)) {
    const nn::PolarityWeights w = a->weights(x);
    return concat({w.same, w.opposite}, 1);  // both streams, as heads
  }
  if (const auto* a = dynamic_cast<const nn::LinearAttention*>(&m)) {
    const nn::HeadsQKV h = a->project(x);
    return nn::causal_kernel_weights(nn::elu_feature_map(h.q), nn::elu_feature_map(h.k));
  }
  if (const auto* a = dynamic_cast<const nn::DilatedAttention*>(&m)) return a->forward(x).weights;
  if (const auto* a = dynamic_cast<const nn::RefinedAttention*>(&m)) return a->weights(x).used;
  if (const auto* a = dynamic_cast<const nn::SanaBlock*>(&m)) {
    const nn::HeadsQKV h = a->attn->project(x);
    return nn::causal_kernel_weights(relu(h.q), relu(h.k));
  }
  return std::nullopt;
}

// Nonzero weights of rows w (B,H,T,T) outside head h's lattice i - j = m r, m < keys.
double off_lattice(const Tensor& w, const nn::DilatedAttention& a) {
  const Tensor allowed = nn::dilated_mask(w.size(2), a.keys(), a.dilations());  // 1 = hidden
  const int64_t b = w.size(0), h = w.size(1), tt = w.size(2) * w.size(3);
  double count = 0;
  for (int64_t n = 0; n < b; ++n)
    for (int64_t head = 0; head < h; ++head)
      for (int64_t e = 0; e < tt; ++e)
        count += w[(n * h + head) * tt + e] != 0 && allowed[head * tt + e] != 0;
  return count;
}

// Entropy and largest weight of the rows every layer applies to one held-out batch of 100.
zoo::RecallProbe row_probe(RowStats& s, uint64_t seed) {
  return [&s, seed](size_t, const MixerModel& m, MixerTap& tap, const data::Task& task) {
    NoGrad no_grad;
    Generator gen(seed);
    const kit::ClassBatch batch = kit::class_batch(task, 100, gen);
    tap.inputs.clear();
    tap.recording = true;
    m.forward(batch.ids);
    tap.recording = false;
    double entropy = 0, max_weight = 0, off = 0;
    int layers = 0;
    for (size_t l = 0; l < tap.modules.size(); ++l) {
      const std::optional<Var> rows = applied_rows(*tap.modules[l], Var::constant(tap.inputs[l]));
      if (!rows) continue;
      entropy += mean_row_entropy(rows->value());
      max_weight += mean_row_max(rows->value());
      if (const auto* d = dynamic_cast<const nn::DilatedAttention*>(tap.modules[l].get()))
        off += off_lattice(rows->value(), *d);
      ++layers;
    }
    s.entropy.push_back(layers > 0 ? entropy / layers : NAN);
    s.max_weight.push_back(layers > 0 ? max_weight / layers : NAN);
    s.off_lattice.push_back(off);
  };
}

void rows_table(RunContext& ctx, const std::vector<ZooVariant>& vs, const RowStats& s, int64_t t) {
  Table table(fmt::format("The rows each trained recall model applies (T = {}; one held-out batch "
                          "of 100, every layer; a causal row t reads t + 1 keys, uniform rows "
                          "would have entropy {:.3f} on average)",
                          t,
                          [&] {
                            double u = 0;
                            for (int64_t i = 1; i <= t; ++i) u += std::log(static_cast<double>(i));
                            return u / static_cast<double>(t);
                          }()),
              {"variant", "mean row entropy (nats)", "mean largest weight"});
  for (size_t i = 0; i < vs.size(); ++i) {
    if (std::isnan(s.entropy[i])) continue;
    table.add_row({vs[i].name, fixed(s.entropy[i], 3), fixed(s.max_weight[i], 3)});
    ctx.result("row_entropy_" + vs[i].name, s.entropy[i]);
    ctx.result("row_max_weight_" + vs[i].name, s.max_weight[i]);
  }
  ctx.table(table);
  ctx.note(
      "PolaFormer's rows are its two streams' (same-sign and opposite-sign) together; SANA's are "
      "its ReLU kernel's; AWRSR's the rows applied to v ((A + B) / 2 for the additive one). "
      "TransNormer has none to read: its lower layers' window runs the banded kernel, its upper "
      "layers drop the denominator that would make the rows sum to 1.");
}

// ---- part 3: the mechanisms' own measurements ----------------------------------------------

// Positions t of x (1,T,d) whose input moves the last output of one layer (a nonzero gradient).
std::vector<int64_t> reached(const nn::DilatedAttention& layer, int64_t t, Generator& gen) {
  const Var x(Tensor::randn({1, t, layer.d_model()}, gen), true);
  const Var y = layer.forward(x).out;
  sum(slice(y, 1, t - 1, t)).backward();
  std::vector<int64_t> out;
  const Tensor& g = x.grad();
  for (int64_t p = 0; p < t; ++p) {
    bool moved = false;
    for (int64_t c = 0; c < layer.d_model(); ++c) moved |= g[p * layer.d_model() + c] != 0;
    if (moved) out.push_back(p);
  }
  return out;
}

Reach reach_part(const Config& cfg, RunContext& ctx) {
  const int64_t d = cfg.get_int("d_model"), h = cfg.get_int("nhead"), t = 32;
  Generator gen(ctx.seed() + 31);
  const nn::DilatedAttention atrous(d, h, kAtrousKeys, std::vector<int64_t>(h, kAtrousDilation),
                                    gen);
  const nn::DilatedAttention local(d, h, kAtrousKeys, std::vector<int64_t>(h, 1), gen);
  const std::vector<int64_t> a = reached(atrous, t, gen), l = reached(local, t, gen);
  Reach r{.keys = kAtrousKeys,
          .dilation = kAtrousDilation,
          .atrous_farthest = t - 1 - a.front(),
          .local_farthest = t - 1 - l.front(),
          .atrous_positions = static_cast<int64_t>(a.size()),
          .local_positions = static_cast<int64_t>(l.size())};
  ctx.section("Part 3: the mechanisms' own measurements");
  Table table(fmt::format("How far one layer reaches: the positions whose input moves the last "
                          "output (nonzero gradient), T = {}",
                          t),
              {"layer", "keys per query", "positions reached", "farthest back", "reached"});
  table.add_row({fmt::format("atrous, dilation {}", kAtrousDilation), std::to_string(kAtrousKeys),
                 std::to_string(r.atrous_positions), std::to_string(r.atrous_farthest),
                 fmt::format("{}", fmt::join(a, ","))});
  table.add_row({"local (dilation 1)", std::to_string(kAtrousKeys),
                 std::to_string(r.local_positions), std::to_string(r.local_farthest),
                 fmt::format("{}", fmt::join(l, ","))});
  ctx.table(table);
  ctx.result("reach_farthest_atrous", r.atrous_farthest);
  ctx.result("reach_farthest_local", r.local_farthest);
  return r;
}

// Linear attention without sinusoidal positions, trained on recall in part 1: what SANA's
// convolution has to make up for.
ZooVariant linear_no_positions() {
  ZooVariant linear = zoo_linear_variants().front();
  linear.name = "linear-no-positions";  // zoo_body: no sinusoidal positions
  return linear;
}

NoPositions no_positions_part(const Accuracies& a, RunContext& ctx) {
  const NoPositions n{.linear_recall = a.ablations.at(0)};
  ctx.result("recall_accuracy_linear_no_positions", n.linear_recall);
  ctx.note(fmt::format(
      "Ablation: linear attention without positions reaches recall {:.3f} (SANA has no positions "
      "either; its depthwise convolution is what tells neighbours apart).",
      n.linear_recall));
  return n;
}

void check(const Config& cfg) {
  zoo::check_zoo_fields(cfg, "linear-zoo");
  zoo::chosen_variants(cfg, all_variants(), "linear-zoo");
}

void run(const Config& cfg, RunContext& ctx) {
  const std::vector<ZooVariant> vs = zoo::chosen_variants(cfg, all_variants(), "linear-zoo");
  zoo::models_note(cfg, ctx, vs,
                   "sinusoidal positions (SANA: neither; its Mix-FFN replaces the feed-forward)");
  RowStats rows;
  const bool sana = zoo::index_of(vs, "sana") >= 0;
  const Accuracies a =
      zoo::accuracy_part(cfg, ctx, vs, row_probe(rows, ctx.seed() + 3),
                         sana ? std::vector{linear_no_positions()} : std::vector<ZooVariant>{});
  rows_table(ctx, vs, rows, 2 * cfg.get_int("recall_pairs") + 2);
  const Costs c = zoo::cost_part(cfg, ctx, vs);
  const Reach reach = reach_part(cfg, ctx);
  NoPositions np;
  if (sana) np = no_positions_part(a, ctx);
  zoo::compare_linear(ctx, vs, a, c, rows, reach, np, cfg.get_int("eval_size"));
}

}  // namespace

Experiment linear_zoo() {
  Experiment e;
  e.name = "linear-zoo";
  e.source = "004 §0x04 4.1";
  e.purpose =
      "attention-zoo's second half: atrous and local + dilated attention, PolaFormer, "
      "TransNormer, a SANA block and AWRSR refinement beside softmax and linear attention: "
      "accuracy, the trained rows' entropy, time and memory against T";
  zoo::add_zoo_fields(e.config);
  e.quick = {{"recall_pairs", "4"}, {"recall_steps", "200"}, {"long_len", "32"},
             {"long_steps", "60"},  {"eval_size", "200"},    {"lengths", "64,128,256,512"},
             {"reps", "3"}};
  e.check = check;
  e.run = run;
  return e;
}

}  // namespace attn::experiments
