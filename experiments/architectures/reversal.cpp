// reversal [002 §39.7, Chapter 40 preview]: train an 8-head encoder-decoder Transformer to
// reverse strings, then open it up: the attention maps of every layer and head on one held-out
// example, and a measured role for every head.
//
//   attnlab run reversal                      # trains (~50 s on 2 cores), then the analysis
//   attnlab run reversal --nhead 4 --d_model 128
//   attnlab run reversal --positional rope    # or none learned alibi t5_bias (default sinusoidal)
//
// The training is the train command's (train/run: train_task with the reversal task and the
// "transformer" model), so the curves, checkpoint and samples are the same files `attnlab train`
// writes, here under <run folder>/train/. The analysis feeds held-out sequences (lengths 8-16,
// never trained on as a set) through the trained model with teacher forcing and reads each
// MultiheadAttention's last weights. A head's role is the pattern on which it puts the most
// attention mass on average (experiments/common/head_roles.h): in the cross-attention,
// "backward" is the source position mirrored to the output being written (L-1-t), "forward" the
// same position t, "eos" the EOS token that ends the source (--src_eos, on by default; "end" is
// the last character).
// Step through: attn::experiments::record_attention, then HeadRoleScores::add.
#include <set>

#include "data/tokenizer.h"
#include "experiments/common/head_roles.h"
#include "experiments/common/trained_run.h"
#include "experiments/kit/kit.h"
#include "experiments/kit/trained_model_report.h"
#include "nn/transformer/seq2seq.h"
#include "train/run/run_train.h"
#include "train/run/task_model.h"
#include "train/run/task_setup.h"

namespace attn::experiments {

namespace {

using RoleScores = std::map<AttentionKind, HeadRoleScores>;

// ---- figures and tables of the training run ----

void report_training(const train::TrainSummary& s, RunContext& ctx) {
  const train::TrainResult& r = s.result;
  LinePlot loss = kit::line_plot("Training loss (cross-entropy per target token)", "step", "loss",
                                 kit::Axes::kLogY);
  loss.series = {
      kit::step_series("training batch", r.losses, static_cast<double>(s.start_step + 1)),
      kit::eval_series(r, "loss", "held-out")};
  LinePlot acc = kit::line_plot("Held-out accuracy during training", "step", "fraction");
  Series token = kit::eval_series(r, "token_accuracy", "token accuracy");
  token.dashed = true;
  acc.series = {kit::eval_series(r, "exact_match", "exact match"), token};
  acc.refs = {{RefLine::kHorizontal, 0.99, "target 0.99"}};
  ctx.figure("training_loss", line_plot_svg(loss), "Loss per step (log scale) and held-out loss");
  ctx.figure("heldout_accuracy", line_plot_svg(acc),
             "Held-out exact match (whole sequence right) and token accuracy");

  Table t("Held-out exact match by source length", {"length", "exact match"});
  nlohmann::ordered_json by_len = nlohmann::ordered_json::object();
  for (const auto& [len, v] : s.exact_match_by_length) {
    t.add_row({std::to_string(len), fixed(v, 3)});
    by_len[std::to_string(len)] = v;
  }
  ctx.table(t);
  ctx.result("exact_match_by_length", by_len);
}

// ---- attention on one example ----

void attention_figures(nn::Seq2SeqTransformer& model,
                       const data::Example& ex,
                       const data::Tokenizer& tok,
                       const RoleScores& scores,
                       double threshold,
                       bool src_eos,
                       RunContext& ctx) {
  const data::Batch b = data::collate_seq2seq({ex}, 0, src_eos);
  const Seq2SeqAttention a = record_attention(model, b.src, b.tgt_in);
  const kit::Seq2SeqLabels labels = kit::seq2seq_labels(tok, ex, src_eos);
  const int64_t heads = model.options().nhead;
  for (AttentionKind kind : kAttentionKinds) {
    const auto& layers = a.of(kind);
    const auto& queries = kind == AttentionKind::kEncoderSelf ? labels.src : labels.decoder;
    const auto& keys = kind == AttentionKind::kDecoderSelf ? labels.decoder : labels.src;
    const HeadRoleScores& s = scores.at(kind);
    std::vector<Heatmap> panels;
    for (size_t l = 0; l < layers.size(); ++l)
      for (int64_t h = 0; h < heads; ++h) {
        const auto li = static_cast<int64_t>(l);
        Heatmap hm =
            attention_heatmap(head_map(layers[l], 0, h), queries, keys,
                              fmt::format("L{} H{}: {}", l + 1, h + 1, s.role(li, h, threshold)));
        hm.cell = 9;
        panels.push_back(hm);
      }
    ctx.figure(kind_name(kind),
               heatmap_grid_svg(panels, static_cast<int>(heads),
                                fmt::format("{}, every layer (rows) and head, on \"{}\"",
                                            kind_title(kind), tok.decode(ex.src))),
               fmt::format("{}: queries down the side, keys along the bottom; each panel's title "
                           "is the head's measured role over the held-out set",
                           kind_title(kind)));
  }
}

// ---- head roles over many held-out examples ----

RoleScores measure_roles(nn::Seq2SeqTransformer& model,
                         const std::vector<data::Example>& set,
                         int64_t layers,
                         int64_t heads,
                         bool src_eos) {
  RoleScores scores;
  for (AttentionKind kind : kAttentionKinds)
    scores.emplace(kind, HeadRoleScores(kind, layers, heads));
  // Same-length examples go through together, so no batch needs padding.
  std::map<size_t, std::vector<data::Example>> by_length;
  for (const auto& ex : set) by_length[ex.src.size()].push_back(ex);
  for (const auto& [len, group] : by_length) {
    const data::Batch b = data::collate_seq2seq(group, 0, src_eos);
    const Seq2SeqAttention a = record_attention(model, b.src, b.tgt_in);
    for (AttentionKind kind : kAttentionKinds)
      for (int64_t l = 0; l < layers; ++l)
        scores.at(kind).add(l, a.of(kind)[static_cast<size_t>(l)], static_cast<int64_t>(len));
  }
  return scores;
}

// One table per kind of attention; every score also goes to results.json.
void report_roles(
    const RoleScores& scores, int64_t layers, int64_t heads, double threshold, RunContext& ctx) {
  for (const auto& [kind, s] : scores) {
    std::vector<std::string> header{"layer", "head"};
    for (const auto& p : s.patterns()) header.push_back(p.name);
    header.push_back("role");
    Table t(fmt::format("{}: mean attention mass on each pattern's key", kind_title(kind)), header);
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (int64_t l = 0; l < layers; ++l)
      for (int64_t h = 0; h < heads; ++h) {
        std::vector<std::string> cells{std::to_string(l + 1), std::to_string(h + 1)};
        nlohmann::ordered_json row{{"layer", l + 1}, {"head", h + 1}};
        for (size_t i = 0; i < s.patterns().size(); ++i) {
          cells.push_back(fixed(s.score(l, h, i), 3));
          row[s.patterns()[i].name] = s.score(l, h, i);
        }
        cells.push_back(s.role(l, h, threshold));
        row["role"] = s.role(l, h, threshold);
        t.add_row(cells);
        if (cells.back() != "mixed") t.flag_last_row();
        rows.push_back(row);
      }
    std::vector<std::string> chance{"uniform", "-"};
    nlohmann::ordered_json chance_json = nlohmann::ordered_json::object();
    for (size_t i = 0; i < s.patterns().size(); ++i) {
      chance.push_back(fixed(s.chance(i), 3));
      chance_json[s.patterns()[i].name] = s.chance(i);
    }
    chance.push_back("(chance)");
    t.add_row(chance);
    ctx.table(t);
    std::string legend;
    for (const auto& p : s.patterns()) legend += fmt::format("{}: {}. ", p.name, p.meaning);
    ctx.note(legend);
    ctx.result("scores_" + kind_name(kind), rows);
    ctx.result("chance_" + kind_name(kind), chance_json);
  }
}

// A window role is the same job as its single-key role ("backward_window" -> "backward").
std::string role_family(const std::string& role) {
  const std::string suffix = "_window";
  return role.ends_with(suffix) ? role.substr(0, role.size() - suffix.size()) : role;
}

// The heads (as "L1 H3") of `kind` whose role is one of `roles`.
std::vector<std::string> heads_with(const HeadRoleScores& s,
                                    const std::set<std::string>& roles,
                                    int64_t layers,
                                    int64_t heads,
                                    double threshold) {
  std::vector<std::string> out;
  for (int64_t l = 0; l < layers; ++l)
    for (int64_t h = 0; h < heads; ++h)
      if (roles.count(s.role(l, h, threshold))) out.push_back(fmt::format("L{} H{}", l + 1, h + 1));
  return out;
}

// Which heads took which role, each pattern's best score, the layers with different roles.
struct RoleFindings {
  std::map<std::string, double> best;  // pattern -> best score over the heads
  std::vector<std::string> backward, forward, end, previous, varied_layers;
  std::set<std::string> roles;  // "<attention kind>:<role family>" over the whole model
  std::string end_pattern;      // the end marker: "eos" when the source has one, else "end"
};

RoleFindings find_roles(const Config& cfg,
                        const RoleScores& scores,
                        int64_t layers,
                        int64_t heads,
                        double threshold,
                        RunContext& ctx) {
  const auto& cross = scores.at(AttentionKind::kCross);
  const auto& dec = scores.at(AttentionKind::kDecoderSelf);
  const auto& enc = scores.at(AttentionKind::kEncoderSelf);
  RoleFindings f;
  for (const char* p : {"backward", "backward_window", "forward", "forward_window", "end", "eos"})
    f.best[p] = cross.best(p);
  f.best["decoder_previous"] = dec.best("previous");
  f.best["encoder_previous"] = enc.best("previous");
  for (const auto& [name, v] : f.best) ctx.result("best_" + name + "_score", v);
  f.backward = heads_with(cross, {"backward", "backward_window"}, layers, heads, threshold);
  f.forward = heads_with(cross, {"forward", "forward_window"}, layers, heads, threshold);
  f.end_pattern = cfg.get_bool("src_eos") ? "eos" : "end";
  f.end = heads_with(cross, {f.end_pattern}, layers, heads, threshold);
  f.previous = heads_with(dec, {"previous"}, layers, heads, threshold);
  for (const auto& h : heads_with(enc, {"previous"}, layers, heads, threshold))
    f.previous.push_back("encoder " + h);
  for (const auto& [kind, sc] : scores)
    for (int64_t l = 0; l < layers; ++l) {
      std::set<std::string> here;
      for (int64_t h = 0; h < heads; ++h)
        if (sc.role(l, h, threshold) != "mixed") here.insert(role_family(sc.role(l, h, threshold)));
      for (const auto& r : here) f.roles.insert(kind_name(kind) + ":" + r);
      if (here.size() >= 2)
        f.varied_layers.push_back(fmt::format("{} layer {}: {}", kind_title(kind), l + 1,
                                              fmt::format("{}", fmt::join(here, ", "))));
    }
  kit::record(ctx, {{"cross_backward_heads", f.backward},
                    {"cross_forward_heads", f.forward},
                    {"cross_end_heads", f.end},
                    {"previous_token_heads", f.previous},
                    {"distinct_roles", std::vector<std::string>(f.roles.begin(), f.roles.end())},
                    {"layers_with_different_roles", f.varied_layers}});
  return f;
}

// ---- 4. the document's claims ----
void compare_with_document(const Config& cfg,
                           double exact,
                           const HeadRoleScores& cross,
                           const RoleFindings& f,
                           RunContext& ctx) {
  auto which = [](const std::vector<std::string>& v) {
    return v.empty() ? std::string("none") : fmt::format("{}", fmt::join(v, ", "));
  };
  const auto& best = f.best;
  DocumentComparison cmp(fmt::format("002 §39.7 vs ours ({} heads, roles at >= {:.2f})",
                                     cfg.get_int("nhead"), cfg.get_real("role_threshold")));
  cmp.add_exact("an 8-head Transformer learns reversal (held-out exact match >= 0.99)", "yes",
                kit::yes_no(exact >= 0.99), fmt::format("exact match {:.4f}", exact));
  cmp.add_exact("a head reads the input backwards (cross-attention)", "yes",
                kit::yes_no(!f.backward.empty()),
                fmt::format("heads {}; best score on the mirrored token {:.3f}, on it and the "
                            "token just written {:.3f} (uniform {:.3f})",
                            which(f.backward), best.at("backward"), best.at("backward_window"),
                            cross.chance(cross.find("backward"))));
  cmp.add_exact("a head reads the input forwards (cross-attention)", "yes",
                kit::yes_no(!f.forward.empty()),
                fmt::format("heads {}; best forward score {:.3f}, two tokens wide {:.3f} "
                            "(uniform {:.3f}): reversal never needs the same position",
                            which(f.forward), best.at("forward"), best.at("forward_window"),
                            cross.chance(cross.find("forward"))));
  cmp.add_exact(
      cfg.get_bool("src_eos") ? "a head looks for the EOS marker (cross-attention)"
                              : "a head looks for the EOS marker (here: the last source character)",
      "yes", kit::yes_no(!f.end.empty()),
      fmt::format("heads {}; best score {:.3f} (uniform {:.3f}){}", which(f.end),
                  best.at(f.end_pattern), cross.chance(cross.find(f.end_pattern)),
                  cfg.get_bool("src_eos") ? ""
                                          : "; --src_eos false: no EOS in the source, so the "
                                            "last character stands in"));
  cmp.add_exact(
      "a head attends to the previous character", "yes", kit::yes_no(!f.previous.empty()),
      fmt::format("heads {}; best decoder score {:.3f}, encoder {:.3f}", which(f.previous),
                  best.at("decoder_previous"), best.at("encoder_previous")));
  cmp.add_exact("different heads of one layer learn different things", "yes",
                kit::yes_no(!f.varied_layers.empty()),
                f.varied_layers.empty()
                    ? fmt::format("in every attention layer the heads with a role share it; "
                                  "roles found over the whole model: {}",
                                  which(std::vector<std::string>(f.roles.begin(), f.roles.end())))
                    : which(f.varied_layers));
  ctx.compare(cmp);
}

void run(const Config& cfg, RunContext& ctx) {
  const double threshold = cfg.get_real("role_threshold");
  const train::TrainConfig tc = reversal_train_config(cfg, ctx.seed());
  // ---- 1. train ----
  ctx.section("Training (train/run: the reversal task, the encoder-decoder Transformer)");
  const TrainedRun trained = train_for_experiment(tc, ctx, "train");
  const train::TrainSummary& s = trained.summary;
  const double exact = s.final_eval.at("exact_match");
  ctx.preformatted(kit::stop_line(s) +
                   fmt::format(" wall, {:.1f} s in training steps, {:.0f} tokens/s\nheld-out exact "
                               "match {:.4f}, token accuracy {:.4f}\ntraining files: {}",
                               s.result.train_seconds, s.result.tokens_per_second, exact,
                               s.final_eval.at("token_accuracy"), s.run_dir));
  ctx.result("exact_match", exact);
  ctx.result("token_accuracy", s.final_eval.at("token_accuracy"));
  ctx.result("heldout_loss", s.final_eval.at("loss"));
  ctx.result("steps", s.result.last_step);
  ctx.result("reached_target", s.result.reached_target);
  ctx.result("train_wall_seconds", s.result.wall_seconds);
  report_training(s, ctx);

  auto* model = dynamic_cast<nn::Seq2SeqTransformer*>(&s.model->module());
  if (!model) throw Error("reversal: the trained model is not a Seq2SeqTransformer");
  model->eval();
  const train::TaskSetup& setup = trained.setup;  // the same held-out set (seeded)
  const auto& tok = setup.heldout->tokenizer();
  const int64_t layers = tc.num_layers, heads = tc.nhead;

  // ---- 2. roles over the held-out set ----
  const auto set = kit::first_examples(setup.heldout_set, cfg.get_int("role_examples"));
  ctx.section(fmt::format("Head roles, averaged over {} held-out sequences", set.size()));
  ctx.note(fmt::format(
      "Each score is the attention mass a head puts on the key a pattern names, averaged over "
      "every decoder (or encoder) row where that pattern names a key of its own. A head gets the "
      "role of its best pattern when that score is at least {:.2f}, else 'mixed'. The last row "
      "of each table is what uniform attention would score.",
      threshold));
  const auto scores = measure_roles(*model, set, layers, heads, cfg.get_bool("src_eos"));
  report_roles(scores, layers, heads, threshold, ctx);

  // ---- 3. the maps on one example: the first held-out source of --example_length ----
  const auto want = static_cast<size_t>(cfg.get_int("example_length"));
  const auto found = std::find_if(setup.heldout_set.begin(), setup.heldout_set.end(),
                                  [&](const data::Example& e) { return e.src.size() == want; });
  const data::Example& ex = found == setup.heldout_set.end() ? setup.heldout_set.front() : *found;
  const auto answer = s.model->generate({ex}, static_cast<int64_t>(ex.tgt.size()) + 1)[0];
  ctx.section("Attention maps on one held-out example");
  ctx.note(fmt::format("Input \"{}\", expected \"{}\", the model writes \"{}\" ({}).",
                       tok.decode(ex.src), tok.decode(ex.tgt), tok.decode(answer),
                       answer == ex.tgt ? "right" : "WRONG"));
  ctx.result("example_input", tok.decode(ex.src));
  ctx.result("example_output", tok.decode(answer));
  attention_figures(*model, ex, tok, scores, threshold, cfg.get_bool("src_eos"), ctx);
  const RoleFindings f = find_roles(cfg, scores, layers, heads, threshold, ctx);
  compare_with_document(cfg, exact, scores.at(AttentionKind::kCross), f, ctx);
}

}  // namespace

Experiment reversal() {
  Experiment e;
  e.name = "reversal";
  e.source = "002 §39.7 (Chapter 40 preview)";
  e.purpose = "Train an 8-head Transformer to reverse strings; measure what each head attends to";
  add_reversal_fields(e.config)
      .add_int("role_examples", 500, "held-out sequences the head roles are averaged over",
               {.min = 1})
      .add_real("role_threshold", 0.5, "score a head needs on its best pattern to get a role",
                {.min = 0})
      .add_int("example_length", 12, "source length of the example drawn as heatmaps", {.min = 1})
      .add_int("seed", 1, "random seed (weights, data, held-out set)", {.min = 0});
  // The same model; a shorter cosine schedule (it decays sooner, which is what lets it reach the
  // target in fewer steps) and smaller held-out sets.
  e.quick = {{"steps", "600"}, {"eval_size", "200"}, {"role_examples", "200"}};
  e.check = [](const Config& c) { require_divides(c, "nhead", "d_model"); };
  e.run = run;
  return e;
}

}  // namespace attn::experiments
