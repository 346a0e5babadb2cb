// attention-zoo [004 §0x04 4.1]: softmax attention beside the variants that reshape its score
// matrix — Linformer (compress keys and values along T), Reformer (hash, sort, attend within
// chunks), Synthesizer (dense and random: weights without q . k) and dual chunk attention
// (re-indexed RoPE distances) — in one model body, on one recall task and one long-range task,
// with time per training step and peak memory against T.
//
//   attnlab run attention-zoo
//   attnlab run attention-zoo --variants softmax,linformer --lengths 128,256,512,1024
//
// Every variant is a token mixer in experiments/common/mixer_model.h's MixerModel (pre-norm
// blocks, the same feed-forward and read-out), built from zoo_variants.h's list, so the only
// difference between two rows of a table is the mixer. Parts:
//   1. accuracy: each variant trained for --steps on associative recall ("k1 v1 ... ? q" -> the
//      value stored under q, read at the last position) and on a long-range task (majority or
//      match, data/tasks/long_range.h), held-out accuracy;
//   2. cost: one training step (forward, backward, Adam) of every variant at each --lengths T,
//      interleaved so outside load hits all alike, and the exact peak tensor bytes of one
//      forward + backward; growth exponents on log-log axes;
//   3. dual chunk attention's own claim, length: a RoPE character model trained at --rope_train_len
//      read at longer lengths with plain RoPE indices and with DCA's (attention_zoo_dca.cpp).
// Step through: nn::LshAttention::forward (the sort and the chunk masks),
// nn::LinformerAttention::forward, nn::RopeAttention::forward (the three score matrices).
#include "experiments/kit/kit.h"

#include "experiments/common/zoo_variants.h"
#include "experiments/efficient/attention_zoo_claims.h"
#include "experiments/efficient/attention_zoo_parts.h"
#include "nn/attention/lsh_attention.h"

namespace attn::experiments {

namespace {

using zoo::Accuracies, zoo::Costs, zoo::DcaExtrapolation, zoo::dca_part, zoo::index_of;

// Every variant the zoo knows, in report order; last the rows of --plugin files (already
// gradient-checked by experiments/plugin/plugin_loader.h).
std::vector<ZooVariant> all_variants() {
  std::vector<ZooVariant> v = zoo_projection_variants();
  for (ZooVariant& r : zoo_recurrent_variants()) v.push_back(std::move(r));
  for (ZooVariant& r : nn::mixer_registry().plugin_rows()) v.push_back(std::move(r));
  return v;
}

std::vector<ZooVariant> chosen_variants(const Config& cfg) {
  return zoo::chosen_variants(cfg, all_variants(), "attention-zoo");
}

// The ablation that tells Reformer's two departures from softmax attention apart: the same
// layer with a chunk as long as the input, so every query sees every key (no buckets), but the
// keys are still the queries.
ZooVariant shared_qk_dense() {
  return {"reformer-one-chunk", "", "", true, [](const ZooShape& s, int64_t, Generator& g) {
            auto m = std::make_shared<nn::LshAttention>(s.d_model, s.nhead, 2, s.max_len, g, true);
            return Mixer{m, [m](const Var& x) { return m->forward(x); }};
          }};
}

// Part 1's notes particular to this zoo: Reformer's one-chunk ablation, dual chunk's lengths.
void accuracy_notes(const Config& cfg,
                    RunContext& ctx,
                    const std::vector<ZooVariant>& vs,
                    Accuracies& a) {
  if (index_of(vs, "reformer-lsh") >= 0) {
    a.recall_shared_qk_dense = a.ablations.at(0);  // shared_qk_dense(), trained in part 1
    ctx.result("recall_accuracy_reformer_one_chunk", a.recall_shared_qk_dense);
    ctx.note(fmt::format(
        "Ablation: Reformer's layer with one chunk as long as the input (every key visible, no "
        "hashing; still shared QK, own position hidden) reaches recall {:.3f}, against {:.3f} "
        "with buckets and {:.3f} for softmax attention.",
        a.recall_shared_qk_dense, a.recall[static_cast<size_t>(index_of(vs, "reformer-lsh"))],
        index_of(vs, "softmax") >= 0 ? a.recall[static_cast<size_t>(index_of(vs, "softmax"))]
                                     : NAN));
  }
  if (const int d = index_of(vs, "dual-chunk"); d >= 0)
    ctx.note(fmt::format(
        "dual-chunk is trained here at lengths within its training length, where DCA's indices "
        "are exactly plain RoPE's (tests/nn/zoo_attention_test.cpp): its accuracies ({:.3f} "
        "recall, {:.3f} {}) are those of RoPE attention in this model and budget. DCA's own "
        "claim, reading longer inputs, is Part 3.",
        a.recall[static_cast<size_t>(d)], a.long_range[static_cast<size_t>(d)],
        cfg.get_string("long_mode")));
}

void check(const Config& cfg) {
  zoo::check_zoo_fields(cfg, "attention-zoo");
  chosen_variants(cfg);  // throws a UsageError for a bad --variants
  const std::vector<int64_t> es = cfg.get_ints("rope_eval_lengths");
  if (es.empty() || !std::is_sorted(es.begin(), es.end()))
    throw UsageError("attention-zoo: --rope_eval_lengths needs increasing lengths");
  if (cfg.get_int("rope_train_len") < 4)
    throw UsageError("attention-zoo: --rope_train_len must be at least 4");
}

void run(const Config& cfg, RunContext& ctx) {
  const std::vector<ZooVariant> vs = chosen_variants(cfg);
  zoo::models_note(cfg, ctx, vs, "sinusoidal positions");
  std::vector<ZooVariant> ablations;
  if (index_of(vs, "reformer-lsh") >= 0) ablations.push_back(shared_qk_dense());
  Accuracies a = zoo::accuracy_part(cfg, ctx, vs, {}, ablations);
  accuracy_notes(cfg, ctx, vs, a);
  const Costs c = zoo::cost_part(cfg, ctx, vs);
  std::unique_ptr<DcaExtrapolation> dca;
  if (index_of(vs, "dual-chunk") >= 0) dca = std::make_unique<DcaExtrapolation>(dca_part(cfg, ctx));
  zoo::compare(ctx, vs, a, c, dca.get(), cfg.get_int("rope_train_len"));
}

}  // namespace

Experiment attention_zoo() {
  Experiment e;
  e.name = "attention-zoo";
  e.source = "004 §0x04 4.1";
  e.purpose =
      "Softmax attention beside Linformer, Reformer LSH, Synthesizer (dense, random), dual chunk, "
      "lightning, a hybrid lightning/softmax stack and a Titans memory: accuracy on recall and a "
      "long-range task, time and memory against T, DCA beyond the training length";
  zoo::add_zoo_fields(e.config);
  e.config.add_int("rope_train_len", 32, "part 3: training length of the RoPE model", {.min = 4})
      .add_int("rope_steps", 300, "part 3: training steps", {.min = 1})
      .add_ints("rope_eval_lengths", {32, 128, 256}, "part 3: evaluation lengths", {.min = 4});
  e.quick = {{"recall_pairs", "4"}, {"recall_steps", "200"}, {"long_len", "32"},
             {"long_steps", "60"},  {"eval_size", "200"},    {"lengths", "64,128,256,512"},
             {"reps", "3"},         {"rope_steps", "150"},   {"rope_eval_lengths", "32,128"}};
  e.check = check;
  e.run = run;
  return e;
}

}  // namespace attn::experiments
