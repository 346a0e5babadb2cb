// mqa-gqa [004 §3.2 (llama3 Attention: n_kv_heads, cache_k / cache_v), §1.3, §4.1]: multi-head,
// grouped-query and multi-query attention at equal width — the same d_model and query heads,
// n_kv_heads = nhead (MHA), a divisor of it (GQA) and 1 (MQA) — trained as character language
// models on the built-in toy-grammar corpus, then decoded with and without a KV cache.
//
//   attnlab run mqa-gqa                      # three trainings and the timings, ~2 min on 2 cores
//   attnlab run mqa-gqa --gqa_kv_heads 4 --prefixes 32,128,512,2048
//
// 1. KV-cache bytes per generated token, read off the cache tensors the model holds (every layer
//    keeps k and v of shape (B, n_kv_heads, T, D)), against the closed form
//    2 (k and v) x layers x n_kv_heads x D x sizeof(float). The query heads share key/value
//    heads in groups of nhead / n_kv_heads, so the cache shrinks by that factor.
// 2. Decoding one token after a prefix of P tokens: with the cache (the new token's q, k, v only;
//    its query attends over the P + 1 cached keys) against recomputing the whole prefix, timed
//    interleaved. Counted multiply-adds per layer (d = d_model, F = dim_ff, Hkv D = kv width):
//      cached step     d (2d + 2 Hkv D) + 2 d F  +  2 d (P + 1)          (projections, FFN, scores)
//      recomputation   (P + 1) x the first term  +  about d (P + 1)^2     (causal: half the scores)
//    so the cached step grows with P only through its attention row, recomputation quadratically.
// 3. Quality: held-out next-character loss and accuracy after the same steps on the same batches.
// Cached and recomputed greedy decoding are checked to give the same tokens and logits.
// Step through: nn::MultiheadAttention::split_heads_attention (the concat onto cache->k).
#include "data/corpus.h"
#include "experiments/efficient/mqa_gqa_decoding.h"
#include "experiments/kit/kit.h"
#include "experiments/kit/language_model_steps.h"
#include "experiments/kit/window_batches.h"
#include "nn/transformer/decoder_only.h"

namespace attn::experiments {

namespace {

std::string variant_name(int64_t kv, int64_t nhead) {
  const char* kind = kv == nhead ? "MHA" : kv == 1 ? "MQA" : "GQA";
  return fmt::format("{} ({} kv head{})", kind, kv, kv == 1 ? "" : "s");
}

nn::DecoderOnlyOptions model_options(const Config& cfg, int64_t vocab, int64_t kv_heads) {
  nn::DecoderOnlyOptions o;
  o.vocab_size = vocab;
  o.max_len = cfg.get_int("block_len");  // rotary positions: decoding may run past it
  o.d_model = cfg.get_int("d_model");
  o.nhead = cfg.get_int("nhead");
  o.n_kv_heads = kv_heads;
  o.num_layers = cfg.get_int("num_layers");
  o.dim_feedforward = cfg.get_int("dim_ff");
  o.positions = nn::PositionKind::kRope;  // as the document's llama3 code
  return o;
}

// Mean next-character NLL (nats) and argmax accuracy over every held-out window.
void evaluate(Variant& v, const std::vector<data::Example>& windows) {
  NoGrad off;
  v.model->eval();
  kit::NextTokenNll lm;
  for (const data::Batch& b : kit::window_batches(windows, 64))
    lm.add(v.model->forward(b.tgt_in).value(), b.tgt_out, data::kIgnoreIndex);  // (B,T,V)
  if (lm.tokens() == 0)
    throw Error("mqa-gqa: no held-out character to score (a larger --sentences?)");
  v.heldout_loss = lm.mean();
  v.heldout_accuracy = lm.accuracy();
}

// Adam with a cosine schedule and gradient clipping at 1 (train::fit); the batches come from
// one seeded stream, so every variant sees the same characters in the same order.
void train_variant(Variant& v,
                   const Config& cfg,
                   const data::LanguageModelTask& task,
                   int64_t vocab,
                   const RunContext& ctx) {
  Generator init(ctx.seed()), data_gen(ctx.seed() * 7919 + 1);
  v.model =
      std::make_shared<nn::DecoderOnlyTransformer>(model_options(cfg, vocab, v.kv_heads), init);
  v.parameters = kit::count_parameters(*v.model);
  v.model->train();
  train::FitSettings s = kit::fit_settings(ctx, v.name, read_optimizer(cfg));
  s.optimizer.d_model = cfg.get_int("d_model");  // for --schedule noam
  const train::TrainResult r = train::fit(*v.model, s, [&](const train::BatchPart& part) {
    return kit::language_model_step(task, s.batch_size, data_gen, part,
                                    [&](const Tensor& ids) { return v.model->forward(ids); });
  });
  v.losses = r.losses;
  v.train_seconds = r.wall_seconds;
}

// Part 1, quality: every variant trained on the same batches, then held-out loss and accuracy.
void quality_part(std::vector<Variant>& vs,
                  const Config& cfg,
                  const data::CharCorpus& corpus,
                  const std::vector<data::Example>& windows,
                  RunContext& ctx) {
  const int64_t block = cfg.get_int("block_len");
  const data::LanguageModelTask train_task(corpus, block, data::Split::kTrain);
  ctx.section(fmt::format("Quality: character LM, {} steps of {} windows of {} characters",
                          cfg.get_int("steps"), cfg.get_int("batch_size"), block));
  Table q("Held-out next-character prediction (same seed, same batches)",
          {"attention", "kv heads", "parameters", "held-out loss (nats)", "accuracy",
           "train time (s)"});
  // Independent variants: each job fills its own Variant and draws from its own generators.
  kit::run_side_by_side(vs.size(), [&](size_t i) {
    train_variant(vs[i], cfg, train_task, corpus.tokenizer().vocab_size(), ctx);
    evaluate(vs[i], windows);
  });
  for (const Variant& v : vs) {
    q.add_row({v.name, std::to_string(v.kv_heads), std::to_string(v.parameters),
               fixed(v.heldout_loss, 4), fixed(v.heldout_accuracy, 4), fixed(v.train_seconds, 1)});
  }
  ctx.table(q);
  const Variant &mha = vs[0], &gq = vs[1], &mq = vs[2];
  ctx.note(fmt::format(
      "{} held-out windows. The key and value projections of GQA and MQA are narrower "
      "(n_kv_heads x D outputs instead of d_model), so they have {} and {} fewer parameters than "
      "MHA; everything else is identical. Loss gaps to MHA: GQA {:+.4f}, MQA {:+.4f} nats.",
      windows.size(), mha.parameters - gq.parameters, mha.parameters - mq.parameters,
      gq.heldout_loss - mha.heldout_loss, mq.heldout_loss - mha.heldout_loss));
}

// The first prompt_len characters of the first decode_prompts held-out windows, and the next.
Prompts make_prompts(const Config& cfg, const std::vector<data::Example>& windows) {
  const int64_t nb = std::min<int64_t>(cfg.get_int("decode_prompts"),
                                       static_cast<int64_t>(windows.size())),
                t0 = cfg.get_int("prompt_len");
  Prompts p{Tensor({nb, t0}), Tensor({nb, 1}), nb, t0};
  for (int64_t r = 0; r < nb; ++r) {
    for (int64_t j = 0; j < t0; ++j)
      p.prompts[r * t0 + j] = static_cast<real>(windows[r].src[static_cast<size_t>(j)]);
    p.next[r] = static_cast<real>(windows[r].src[static_cast<size_t>(t0)]);
  }
  return p;
}

// Every number of the parts in results.json, variant by variant.
void results_part(const std::vector<Variant>& vs,
                  const DecodeGrowth& g,
                  const Prompts& p,
                  const Config& cfg,
                  RunContext& ctx) {
  for (const Variant& v : vs) {
    const std::string& k = v.key;
    ctx.result(k + "_kv_heads", v.kv_heads);
    ctx.result(k + "_parameters", v.parameters);
    ctx.result(k + "_heldout_loss", v.heldout_loss);
    ctx.result(k + "_heldout_accuracy", v.heldout_accuracy);
    ctx.result(k + "_cache_bytes_per_token", v.cache.per_token);
    ctx.result(k + "_cache_bytes_closed_form", v.cache.closed_form);
    ctx.result(k + "_cache_bytes_held", v.cache.at_prompt);
    ctx.result(k + "_cache_shapes_ok", v.cache.shapes_ok);
    ctx.result(k + "_decode_tokens_compared", v.agreement.tokens);
    ctx.result(k + "_decode_tokens_differ", v.agreement.mismatched);
    ctx.result(k + "_max_logit_diff", v.agreement.max_logit_diff);
    ctx.result(k + "_max_abs_logit", v.agreement.max_abs_logit);
    ctx.result(k + "_cached_ms", v.cached_ms);
    ctx.result(k + "_recompute_ms", v.recompute_ms);
    ctx.result(k + "_train_seconds", v.train_seconds);
  }
  const nn::DecoderOnlyOptions& o = vs[0].model->options();
  ctx.result("layers", o.num_layers);
  ctx.result("head_dim", o.d_model / o.nhead);
  ctx.result("nhead", o.nhead);
  ctx.result("prompts", p.count);
  ctx.result("prompt_len", p.length);
  ctx.result("prefixes", cfg.get_ints("prefixes"));
  ctx.result("gqa_cache_ratio", cache_ratio(vs, 1));
  ctx.result("mqa_cache_ratio", cache_ratio(vs, 2));
  ctx.result("cached_time_slope", g.cached_slope);
  ctx.result("recompute_time_slope", g.recompute_slope);
  ctx.result("cached_macs_growth", g.macs_growth);
  ctx.result("load_average_before_timing", g.load);
  ctx.result("timing_threads", num_threads());
}

// 004 §3.2, §1.3 and §4.1's claims beside the parts' numbers.
void compare_with_document(const std::vector<Variant>& vs,
                           const DecodeGrowth& g,
                           const Config& cfg,
                           RunContext& ctx) {
  const int64_t nhead = cfg.get_int("nhead"), gqa = cfg.get_int("gqa_kv_heads");
  const double band = cfg.get_real("quality_band");
  const Variant &mha = vs[0], &gq = vs[1], &mq = vs[2];
  DocumentComparison cmp("004 §3.2 (llama3 Attention), §1.3, §4.1: the claims, checked");
  cmp.add(fmt::format("cache shrinks MHA / GQA = nhead / n_kv_heads = {} / {}", nhead, gqa),
          static_cast<double>(nhead) / static_cast<double>(gqa), cache_ratio(vs, 1), 0.0, "", 2);
  cmp.add(fmt::format("cache shrinks MHA / MQA = nhead = {}", nhead), static_cast<double>(nhead),
          cache_ratio(vs, 2), 0.0, "", 2);
  cmp.add("MHA cache bytes / token = 2 L Hkv D x 4 (cache_k, cache_v)",
          static_cast<double>(mha.cache.closed_form), static_cast<double>(mha.cache.per_token), 0.0,
          "", 0);
  cmp.add_exact("cache holds n_kv_heads heads, not nhead (B, Hkv, T, D)", "yes",
                gq.cache.shapes_ok && mq.cache.shapes_ok ? "yes" : "no");
  cmp.add(fmt::format("GQA held-out loss close to MHA's (within {} nats)", band), mha.heldout_loss,
          gq.heldout_loss, band, "", 4);
  cmp.add(fmt::format("MQA held-out loss close to MHA's (within {} nats)", band), mha.heldout_loss,
          mq.heldout_loss, band, "MQA shares one key/value head among all queries", 4);
  int64_t differ = 0;
  bool cache_faster = true;  // at the longest prefix, every variant
  for (const Variant& v : vs) {
    differ += v.agreement.mismatched;
    cache_faster = cache_faster && v.cached_ms.back() < v.recompute_ms.back();
  }
  cmp.add_exact("cached decoding gives the same tokens as recomputation", "yes",
                differ == 0 ? "yes" : "no");
  // Per-token cost with the cache, against the prefix length: the document's cached scores are
  // (seqlen, cache_len + seqlen), so only that row grows; "roughly constant" is the usual claim.
  cmp.add("cached step time growth exponent in P (~0: roughly constant)", 0.0, g.cached_slope, 0.25,
          fmt::format("timing, machine-dependent; the counted work of the step grows {:.2f} x "
                      "over the prefixes because its query reads all P cached keys (d_model = "
                      "{} is small next to P)",
                      g.macs_growth, cfg.get_int("d_model")),
          2);
  cmp.add("recomputation time growth exponent (top 3 octaves of P; attention ~ P^2)", 2.0,
          g.recompute_slope, 0.6,
          "timing, machine-dependent; below P ~ d_ff the per-token projections and "
          "feed-forward (linear in P) still dominate",
          2);
  cmp.add_exact("caching is faster at the longest prefix (every variant)", "yes",
                cache_faster ? "yes" : "no");
  ctx.compare(cmp);
}

// The decode times and losses as CSVs, and the three figures.
void figures_part(const std::vector<Variant>& vs, const Config& cfg, RunContext& ctx) {
  const std::vector<int64_t>& prefixes = cfg.get_ints("prefixes");
  const std::vector<double> ps(prefixes.begin(), prefixes.end());
  CsvWriter tcsv =
      ctx.csv("decode_times", {"P", "mha_cached_ms", "mha_recompute_ms", "gqa_cached_ms",
                               "gqa_recompute_ms", "mqa_cached_ms", "mqa_recompute_ms"});
  for (size_t j = 0; j < ps.size(); ++j)
    tcsv.row({ps[j], vs[0].cached_ms[j], vs[0].recompute_ms[j], vs[1].cached_ms[j],
              vs[1].recompute_ms[j], vs[2].cached_ms[j], vs[2].recompute_ms[j]});
  CsvWriter lcsv = ctx.csv("loss", {"step", "mha_loss", "gqa_loss", "mqa_loss"});
  for (size_t s = 0; s < vs[0].losses.size(); ++s)
    lcsv.row({static_cast<double>(s + 1), vs[0].losses[s], vs[1].losses[s], vs[2].losses[s]});

  const char* colours[] = {"#f59e0b", "#3b82f6", "#10b981"};
  LinePlot tp = kit::line_plot("Time to decode one token after a prefix of P", "prefix length P",
                               "ms", kit::Axes::kLogLog);
  for (size_t i = 0; i < vs.size(); ++i) {
    tp.series.push_back({vs[i].name + ", KV cache", ps, vs[i].cached_ms, colours[i]});
    tp.series.push_back({vs[i].name + ", recompute", ps, vs[i].recompute_ms, colours[i], true});
  }
  ctx.figure("decode_time", line_plot_svg(tp),
             "With the cache the step grows slowly with P; recomputing the prefix grows ~P^2");

  BarChart bc;
  bc.title = "KV-cache bytes per generated token";
  bc.y_label = "bytes";
  BarSeries measured{"measured", {}, "#3b82f6"}, closed{"2 L Hkv D x 4", {}, "#9ca3af"};
  for (const Variant& v : vs) {
    bc.labels.push_back(v.name);
    measured.values.push_back(static_cast<double>(v.cache.per_token));
    closed.values.push_back(static_cast<double>(v.cache.closed_form));
  }
  bc.series = {measured, closed};
  ctx.figure("cache_bytes", bar_chart_svg(bc), "The cache shrinks by nhead / n_kv_heads");

  LinePlot lp = kit::line_plot("Training loss (next character, nats)", "step", "loss");
  std::vector<double> xs(vs[0].losses.size());
  std::iota(xs.begin(), xs.end(), 1.0);  // steps 1, 2, ...
  for (size_t i = 0; i < vs.size(); ++i)
    lp.series.push_back({vs[i].name, xs, vs[i].losses, colours[i], false, false});
  ctx.figure("loss", line_plot_svg(lp), "Same steps, same batches: MHA, GQA and MQA");
}

void run(const Config& cfg, RunContext& ctx) {
  const int64_t nhead = cfg.get_int("nhead");
  const data::CharCorpus corpus(data::toy_grammar_text(cfg.get_int("sentences"), 7));
  const std::vector<data::Example> windows =
      data::LanguageModelTask(corpus, cfg.get_int("block_len"), data::Split::kValidation)
          .all_windows();
  std::vector<Variant> vs;
  for (int64_t kv : {nhead, cfg.get_int("gqa_kv_heads"), int64_t{1}})
    vs.push_back({variant_name(kv, nhead), kv == nhead ? "mha" : kv == 1 ? "mqa" : "gqa", kv});
  quality_part(vs, cfg, corpus, windows, ctx);
  const Prompts p = make_prompts(cfg, windows);
  cache_part(vs, p, ctx);
  agreement_part(vs, p, cfg.get_int("decode_tokens"), ctx);
  const DecodeGrowth g = decode_time_part(vs, cfg, corpus.val_ids(), ctx);
  results_part(vs, g, p, cfg, ctx);
  compare_with_document(vs, g, cfg, ctx);
  figures_part(vs, cfg, ctx);
}

void check(const Config& cfg) {
  require_divides(cfg, "nhead", "d_model");
  require_divides(cfg, "gqa_kv_heads", "nhead");
  const int64_t nhead = cfg.get_int("nhead"), gqa = cfg.get_int("gqa_kv_heads");
  if ((cfg.get_int("d_model") / nhead) % 2 != 0)
    throw UsageError(fmt::format(
        "mqa-gqa: rotary positions need an even head width: --d_model {} / --nhead {} = {}",
        cfg.get_int("d_model"), nhead, cfg.get_int("d_model") / nhead));
  if (gqa <= 1 || gqa >= nhead)
    throw UsageError(fmt::format(
        "mqa-gqa: --gqa_kv_heads {} must lie strictly between 1 (MQA) and --nhead {} (MHA)", gqa,
        nhead));
  if (cfg.get_int("warmup") >= cfg.get_int("steps"))
    throw UsageError(fmt::format("mqa-gqa: --warmup {} must be below --steps {}",
                                 cfg.get_int("warmup"), cfg.get_int("steps")));
  if (cfg.get_int("prompt_len") >= cfg.get_int("block_len"))
    throw UsageError(fmt::format("mqa-gqa: --prompt_len {} must be below --block_len {}",
                                 cfg.get_int("prompt_len"), cfg.get_int("block_len")));
  // The held-out tenth of the corpus must hold at least one window (and its next character).
  const data::CharCorpus corpus(data::toy_grammar_text(cfg.get_int("sentences"), 7));
  if (static_cast<int64_t>(corpus.val_ids().size()) <= cfg.get_int("block_len"))
    throw UsageError(fmt::format(
        "mqa-gqa: --sentences {} hold out {} characters, fewer than one window of --block_len {} "
        "+ 1",
        cfg.get_int("sentences"), corpus.val_ids().size(), cfg.get_int("block_len")));
  const std::vector<int64_t> p = cfg.get_ints("prefixes");
  if (p.size() < 2 || !std::is_sorted(p.begin(), p.end()) || p.front() == p.back())
    throw UsageError("mqa-gqa: --prefixes needs at least two increasing lengths");
}

}  // namespace

Experiment mqa_gqa() {
  Experiment e;
  e.name = "mqa-gqa";
  e.source = "004 §3.2 (llama3 n_kv_heads, KV cache), §1.3, §4.1";
  e.purpose = "MHA vs GQA vs MQA: KV-cache bytes, cached vs recomputed decoding, LM quality";
  e.nondeterministic = {"fits decoding-time growth exponents to measured times",
                        {"time growth exponent", "caching is faster"}};
  add_model_fields(e.config, {.d_model = 64, .nhead = 8, .num_layers = 2, .dim_ff = 256});
  add_optimizer_fields(e.config, {.steps = 400,
                                  .batch_size = 32,
                                  .lr = 3e-3,
                                  .schedule = "cosine",
                                  .warmup = 40,
                                  .clip = 1.0});
  e.config
      .add_int("gqa_kv_heads", 2, "key/value heads of the GQA variant (divides nhead)", {.min = 1})
      .add_int("sentences", 4000, "toy-grammar sentences in the corpus (10% held out)", {.min = 50})
      .add_int("block_len", 64, "characters per training window", {.min = 4})
      .add_real("quality_band", 0.1, "GQA/MQA held-out loss counts as close within this (nats)",
                {.min = 0})
      .add_int("decode_prompts", 4, "prompts decoded for the cache and agreement checks",
               {.min = 1})
      .add_int("prompt_len", 16, "characters per prompt", {.min = 1})
      .add_int("decode_tokens", 32, "greedy tokens generated per prompt", {.min = 1})
      .add_ints("prefixes", {16, 64, 256, 1024}, "prefix lengths P to time decoding at", {.min = 1})
      .add_int("reps", 15, "timed rounds per prefix at most (the median is reported)", {.min = 1})
      .add_real("budget_s", 4.0, "about this many seconds of timing per prefix", {.min = 0})
      .add_int("timing_threads", 1, "threads for the timing (0 = the CLI's --threads)", {.min = 0})
      .add_int("seed", 1, "random seed (initialisation and batches)", {.min = 0});
  e.quick = {{"steps", "80"},     {"sentences", "1000"},   {"prefixes", "16,64,256"}, {"reps", "5"},
             {"budget_s", "0.5"}, {"decode_tokens", "16"}, {"warmup", "10"}};
  e.check = check;
  e.run = run;
  return e;
}

}  // namespace attn::experiments
