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
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/parallel.h"
#include "data/batch.h"
#include "data/corpus.h"
#include "experiments/common/interleaved_timing.h"
#include "experiments/common/loglog.h"
#include "experiments/experiment.h"
#include "experiments/kit/evaluation.h"
#include "experiments/kit/fit.h"
#include "experiments/report/charts.h"
#include "experiments/run_context.h"
#include "nn/transformer/decoder_only.h"
#include "train/fit.h"

namespace attn::experiments {

namespace {

// One attention variant: its key/value head count and the model trained with it.
struct Variant {
  std::string name;  // "MHA (8 kv heads)"
  int64_t kv_heads = 0;
  std::shared_ptr<nn::DecoderOnlyTransformer> model;
  std::vector<double> losses;  // training loss per step
  double heldout_loss = 0, heldout_accuracy = 0, train_seconds = 0;
  int64_t parameters = 0;
};

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
  for (size_t at = 0; at < windows.size(); at += 64) {
    const std::vector<data::Example> part(
        windows.begin() + static_cast<std::ptrdiff_t>(at),
        windows.begin() + static_cast<std::ptrdiff_t>(std::min(at + 64, windows.size())));
    const data::Batch b = data::collate_language_model(part);
    lm.add(v.model->forward(b.tgt_in).value(), b.tgt_out, data::kIgnoreIndex);  // (B,T,V)
  }
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
  const int64_t batch = s.batch_size;
  const train::TrainResult r = train::fit(*v.model, s, [&](const train::BatchPart& part) {
    std::vector<data::Example> examples;
    for (int64_t i = 0; i < batch; ++i) examples.push_back(task.sample(data_gen));
    const data::Batch b = data::collate_language_model(part.items(examples));
    const int64_t scored = b.tgt_out.numel();  // every position of a window is scored
    return train::StepLoss{cross_entropy(v.model->forward(b.tgt_in), b.tgt_out, data::kIgnoreIndex),
                           scored};
  });
  v.losses = r.losses;
  v.train_seconds = r.wall_seconds;
}

// ---- 1. cache bytes ----

int64_t cache_bytes(const std::vector<nn::KVCache>& caches) {
  int64_t n = 0;
  for (const nn::KVCache& c : caches)
    if (c.filled) n += (c.k.value().numel() + c.v.value().numel());
  return n * static_cast<int64_t>(sizeof(real));
}

struct CacheBytes {
  int64_t per_token = 0, closed_form = 0, at_prompt = 0;
  bool shapes_ok = true;  // every layer's k and v are (B, n_kv_heads, T, D)
};

CacheBytes measure_cache(Variant& v, const Tensor& prompt, const Tensor& next) {
  NoGrad off;
  const nn::DecoderOnlyOptions& o = v.model->options();
  const int64_t b = prompt.size(0), t = prompt.size(1), d_head = o.d_model / o.nhead;
  std::vector<nn::KVCache> caches = v.model->make_caches();
  v.model->forward(prompt, &caches);
  CacheBytes r;
  r.at_prompt = cache_bytes(caches);
  for (const nn::KVCache& c : caches)
    r.shapes_ok = r.shapes_ok && c.k.shape() == Shape{b, v.kv_heads, t, d_head} &&
                  c.v.shape() == Shape{b, v.kv_heads, t, d_head};
  v.model->forward(next, &caches);
  r.per_token = (cache_bytes(caches) - r.at_prompt) / b;
  r.closed_form =
      2 * o.num_layers * v.kv_heads * d_head * static_cast<int64_t>(sizeof(float));  // 4 bytes
  return r;
}

// ---- 2. cached vs recomputed decoding: the same tokens, the same logits ----

struct Agreement {
  int64_t tokens = 0, mismatched = 0;
  double max_logit_diff = 0, max_abs_logit = 0;
};

Agreement compare_decoding(nn::DecoderOnlyTransformer& model,
                           const Tensor& prompts,
                           int64_t new_tokens) {
  NoGrad off;
  model.eval();
  Generator unused(0);  // greedy decoding draws nothing
  const Tensor cached = model.generate(prompts, new_tokens, {}, unused, std::nullopt, true);
  const Tensor recomputed = model.generate(prompts, new_tokens, {}, unused, std::nullopt, false);
  Agreement a;
  a.tokens = cached.numel();
  for (int64_t i = 0; i < std::min(cached.numel(), recomputed.numel()); ++i)
    a.mismatched += cached[i] != recomputed[i];
  a.mismatched += std::abs(cached.numel() - recomputed.numel());
  // Logits: one token at a time through the caches against one pass over the whole sequence.
  const int64_t b = cached.size(0), total = cached.size(1), t0 = prompts.size(1);
  const Tensor full = model.forward(cached).value();  // (B,total,V)
  const int64_t vocab = full.size(2);
  std::vector<nn::KVCache> caches = model.make_caches();
  auto columns = [&](int64_t lo, int64_t hi) {
    Tensor out({b, hi - lo});
    for (int64_t r = 0; r < b; ++r)
      for (int64_t j = lo; j < hi; ++j) out[r * (hi - lo) + j - lo] = cached[r * total + j];
    return out;
  };
  auto compare = [&](const Tensor& step, int64_t lo) {  // step (B, n, V) for positions lo..
    for (int64_t r = 0; r < b; ++r)
      for (int64_t j = 0; j < step.size(1); ++j)
        for (int64_t c = 0; c < vocab; ++c) {
          const real x = step[(r * step.size(1) + j) * vocab + c],
                     y = full[(r * total + lo + j) * vocab + c];
          a.max_logit_diff = std::max(a.max_logit_diff, static_cast<double>(std::fabs(x - y)));
          a.max_abs_logit = std::max(a.max_abs_logit, static_cast<double>(std::fabs(y)));
        }
  };
  compare(model.forward(columns(0, t0), &caches).value(), 0);
  for (int64_t t = t0; t < total; ++t)
    compare(model.forward(columns(t, t + 1), &caches).value(), t);
  return a;
}

// ---- 3. decode time per token ----

struct DecodeTimes {
  std::vector<std::vector<double>> cached_ms, recompute_ms;  // [variant][prefix]
};

DecodeTimes time_decoding(std::vector<Variant>& vs,
                          const Config& cfg,
                          const std::vector<int64_t>& ids) {
  const std::vector<int64_t> prefixes = cfg.get_ints("prefixes");
  ScopedThreads threads(static_cast<int>(cfg.get_int("timing_threads")));
  DecodeTimes dt;
  dt.cached_ms.assign(vs.size(), {});
  dt.recompute_ms.assign(vs.size(), {});
  for (int64_t p : prefixes) {
    Tensor full({1, p + 1});  // the prefix and the token decoded after it, from held-out text
    for (int64_t j = 0; j <= p; ++j)
      full[j] = static_cast<real>(ids[static_cast<size_t>(j) % ids.size()]);
    Tensor prefix({1, p}), next({1, 1});
    std::copy(full.data(), full.data() + p, prefix.data());
    next[0] = full[p];
    std::vector<std::vector<nn::KVCache>> filled;
    std::vector<std::function<void()>> works;
    for (Variant& v : vs) {
      NoGrad off;
      v.model->eval();
      filled.push_back(v.model->make_caches());
      v.model->forward(prefix, &filled.back());
    }
    for (size_t i = 0; i < vs.size(); ++i) {
      nn::DecoderOnlyTransformer* m = vs[i].model.get();
      const std::vector<nn::KVCache>* c = &filled[i];
      // A copy of the cache handles: the concat makes new tensors, so the filled cache stays at
      // P tokens for every round.
      works.push_back([m, c, &next] {
        NoGrad off;
        std::vector<nn::KVCache> copy = *c;
        m->forward(next, &copy);
      });
      works.push_back([m, &full] {
        NoGrad off;
        m->forward(full);
      });
    }
    const std::vector<Timing> t =
        time_interleaved(works, static_cast<int>(cfg.get_int("reps")), cfg.get_real("budget_s"));
    for (size_t i = 0; i < vs.size(); ++i) {
      dt.cached_ms[i].push_back(t[2 * i].median_s * 1e3);
      dt.recompute_ms[i].push_back(t[2 * i + 1].median_s * 1e3);
    }
  }
  return dt;
}

// Counted multiply-adds of one layer for the new token after a prefix of p (see the top).
double cached_step_macs(const nn::DecoderOnlyOptions& o, int64_t kv_heads, double p) {
  const double d = static_cast<double>(o.d_model), kv = static_cast<double>(kv_heads) * d / o.nhead,
               f = static_cast<double>(o.dim_feedforward);
  return d * (2 * d + 2 * kv) + 2 * d * f + 2 * d * (p + 1);
}

std::vector<double> as_doubles(const std::vector<int64_t>& xs) {
  return {xs.begin(), xs.end()};
}

void run(const Config& cfg, RunContext& ctx) {
  const int64_t nhead = cfg.get_int("nhead"), gqa = cfg.get_int("gqa_kv_heads");
  const data::CharCorpus corpus(data::toy_grammar_text(cfg.get_int("sentences"), 7));
  const int64_t block = cfg.get_int("block_len");
  const data::LanguageModelTask train_task(corpus, block, data::Split::kTrain);
  const data::LanguageModelTask heldout(corpus, block, data::Split::kValidation);
  const std::vector<data::Example> windows = heldout.all_windows();
  const int64_t vocab = corpus.tokenizer().vocab_size();

  std::vector<Variant> vs;
  for (int64_t kv : {nhead, gqa, int64_t{1}}) vs.push_back({variant_name(kv, nhead), kv});

  // ---- quality ----
  ctx.section(fmt::format("Quality: character LM, {} steps of {} windows of {} characters",
                          cfg.get_int("steps"), cfg.get_int("batch_size"), block));
  Table q("Held-out next-character prediction (same seed, same batches)",
          {"attention", "kv heads", "parameters", "held-out loss (nats)", "accuracy",
           "train time (s)"});
  for (Variant& v : vs) {
    train_variant(v, cfg, train_task, vocab, ctx);
    evaluate(v, windows);
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

  // ---- cache bytes ----
  ctx.section("KV-cache bytes per generated token (read off the cache tensors)");
  const int64_t nb = std::min<int64_t>(cfg.get_int("decode_prompts"),
                                       static_cast<int64_t>(windows.size())),
                t0 = cfg.get_int("prompt_len");
  Tensor prompts({nb, t0}), next({nb, 1});
  for (int64_t r = 0; r < nb; ++r) {
    for (int64_t j = 0; j < t0; ++j)
      prompts[r * t0 + j] = static_cast<real>(windows[r].src[static_cast<size_t>(j)]);
    next[r] = static_cast<real>(windows[r].src[static_cast<size_t>(t0)]);
  }
  const nn::DecoderOnlyOptions& o = mha.model->options();
  const int64_t d_head = o.d_model / o.nhead;
  Table cb(fmt::format("{} layers, D = {}, float32; {} prompts of {} characters", o.num_layers,
                       d_head, nb, t0),
           {"attention", "kv heads", "bytes / token (measured)", "2 L Hkv D x 4", "MHA / this",
            fmt::format("held after {} tokens", t0), "k, v shapes (B,Hkv,T,D)"});
  std::vector<CacheBytes> bytes;
  for (Variant& v : vs) {
    bytes.push_back(measure_cache(v, prompts, next));
    const CacheBytes& c = bytes.back();
    cb.add_row(
        {v.name, std::to_string(v.kv_heads), std::to_string(c.per_token),
         std::to_string(c.closed_form),
         fixed(static_cast<double>(bytes[0].per_token) / static_cast<double>(c.per_token), 2),
         std::to_string(c.at_prompt), c.shapes_ok ? "yes" : "NO"});
  }
  ctx.table(cb);
  const double gqa_ratio =
      static_cast<double>(bytes[0].per_token) / static_cast<double>(bytes[1].per_token);
  const double mqa_ratio =
      static_cast<double>(bytes[0].per_token) / static_cast<double>(bytes[2].per_token);
  ctx.note(fmt::format(
      "Each layer's cache holds k and v of shape (B, n_kv_heads, T, D): the query heads of a "
      "group read the same cached head, so nothing of size nhead is stored. MHA / GQA = {:.2f} "
      "(nhead / n_kv_heads = {}), MHA / MQA = {:.2f} (nhead = {}). The document's llama3 code "
      "allocates cache_k and cache_v for max_batch_size x max_seq_len up front; here the cache "
      "grows by one position per token (a concat), so the bytes held are always B x T x the "
      "per-token figure ({} bytes for MHA after {} tokens of {} prompts).",
      gqa_ratio, nhead / gqa, mqa_ratio, nhead, bytes[0].at_prompt, t0, nb));

  // ---- same tokens ----
  ctx.section("Cached and recomputed decoding agree");
  Table ag(
      fmt::format("Greedy decoding of {} new tokens after {} prompts of {} characters",
                  cfg.get_int("decode_tokens"), nb, t0),
      {"attention", "tokens compared", "tokens that differ", "max |logit diff|", "max |logit|"});
  std::vector<Agreement> agree;
  for (Variant& v : vs) {
    agree.push_back(compare_decoding(*v.model, prompts, cfg.get_int("decode_tokens")));
    const Agreement& a = agree.back();
    ag.add_row({v.name, std::to_string(a.tokens), std::to_string(a.mismatched),
                sig(a.max_logit_diff, 2), fixed(a.max_abs_logit, 2)});
  }
  ctx.table(ag);

  // ---- decode time ----
  const std::vector<int64_t> prefixes = cfg.get_ints("prefixes");
  const std::vector<double> ps = as_doubles(prefixes);
  const double load = load_average();
  const DecodeTimes dt = time_decoding(vs, cfg, corpus.val_ids());
  ctx.section(fmt::format("Decode time for one token after a prefix of P ({} thread{})",
                          num_threads(), num_threads() == 1 ? "" : "s"));
  std::vector<std::string> header{"P"};
  for (const Variant& v : vs) {
    header.push_back(v.name + " cached (ms)");
    header.push_back("recompute (ms)");
  }
  header.push_back("MHA recompute / cached");
  Table tt("Median of interleaved rounds, batch 1", header);
  for (size_t j = 0; j < ps.size(); ++j) {
    std::vector<std::string> row{std::to_string(prefixes[j])};
    for (size_t i = 0; i < vs.size(); ++i) {
      row.push_back(fixed(dt.cached_ms[i][j], 3));
      row.push_back(fixed(dt.recompute_ms[i][j], 3));
    }
    row.push_back(fixed(dt.recompute_ms[0][j] / dt.cached_ms[0][j], 1));
    tt.add_row(row);
  }
  ctx.table(tt);
  const double p_ratio = ps.back() / ps.front();
  const double cached_growth = dt.cached_ms[0].back() / dt.cached_ms[0].front(),
               recompute_growth = dt.recompute_ms[0].back() / dt.recompute_ms[0].front();
  const double cached_slope = log_log_slope(ps, dt.cached_ms[0]),
               recompute_slope = log_log_slope(ps, dt.recompute_ms[0], ps.back() / 8);
  const double macs_growth =
      cached_step_macs(o, nhead, ps.back()) / cached_step_macs(o, nhead, ps.front());
  ctx.note(fmt::format(
      "From P = {} to P = {} ({:.0f} x longer) the MHA cached step's time grows {:.2f} x "
      "(log-log slope {:.2f}) and recomputation's {:.1f} x (slope {:.2f} over the top three "
      "octaves). The counted multiply-adds of the cached step grow {:.2f} x: its projections and "
      "feed-forward are fixed, but its query still reads all P cached keys and values, and the "
      "concat copies the cache once per token. 1-minute load average before timing: {:.1f}; "
      "each cell is the median of up to {} rounds (fewer, at least {}, when a round is slow).",
      prefixes.front(), prefixes.back(), p_ratio, cached_growth, cached_slope, recompute_growth,
      recompute_slope, macs_growth, load, cfg.get_int("reps"), kMinTimedRounds));

  // ---- results ----
  for (size_t i = 0; i < vs.size(); ++i) {
    const std::string k = vs[i].kv_heads == nhead ? "mha" : vs[i].kv_heads == 1 ? "mqa" : "gqa";
    ctx.result(k + "_kv_heads", vs[i].kv_heads);
    ctx.result(k + "_parameters", vs[i].parameters);
    ctx.result(k + "_heldout_loss", vs[i].heldout_loss);
    ctx.result(k + "_heldout_accuracy", vs[i].heldout_accuracy);
    ctx.result(k + "_cache_bytes_per_token", bytes[i].per_token);
    ctx.result(k + "_cache_bytes_closed_form", bytes[i].closed_form);
    ctx.result(k + "_cache_bytes_held", bytes[i].at_prompt);
    ctx.result(k + "_cache_shapes_ok", bytes[i].shapes_ok);
    ctx.result(k + "_decode_tokens_compared", agree[i].tokens);
    ctx.result(k + "_decode_tokens_differ", agree[i].mismatched);
    ctx.result(k + "_max_logit_diff", agree[i].max_logit_diff);
    ctx.result(k + "_max_abs_logit", agree[i].max_abs_logit);
    ctx.result(k + "_cached_ms", dt.cached_ms[i]);
    ctx.result(k + "_recompute_ms", dt.recompute_ms[i]);
    ctx.result(k + "_train_seconds", vs[i].train_seconds);
  }
  ctx.result("layers", o.num_layers);
  ctx.result("head_dim", d_head);
  ctx.result("nhead", nhead);
  ctx.result("prompts", nb);
  ctx.result("prompt_len", t0);
  ctx.result("prefixes", prefixes);
  ctx.result("gqa_cache_ratio", gqa_ratio);
  ctx.result("mqa_cache_ratio", mqa_ratio);
  ctx.result("cached_time_slope", cached_slope);
  ctx.result("recompute_time_slope", recompute_slope);
  ctx.result("cached_macs_growth", macs_growth);
  ctx.result("load_average_before_timing", load);
  ctx.result("timing_threads", num_threads());

  // ---- the document beside ours ----
  const double band = cfg.get_real("quality_band");
  DocumentComparison cmp("004 §3.2 (llama3 Attention), §1.3, §4.1: the claims, checked");
  cmp.add(fmt::format("cache shrinks MHA / GQA = nhead / n_kv_heads = {} / {}", nhead, gqa),
          static_cast<double>(nhead) / static_cast<double>(gqa), gqa_ratio, 0.0, "", 2);
  cmp.add(fmt::format("cache shrinks MHA / MQA = nhead = {}", nhead), static_cast<double>(nhead),
          mqa_ratio, 0.0, "", 2);
  cmp.add("MHA cache bytes / token = 2 L Hkv D x 4 (cache_k, cache_v)",
          static_cast<double>(bytes[0].closed_form), static_cast<double>(bytes[0].per_token), 0.0,
          "", 0);
  cmp.add_exact("cache holds n_kv_heads heads, not nhead (B, Hkv, T, D)", "yes",
                bytes[1].shapes_ok && bytes[2].shapes_ok ? "yes" : "no");
  cmp.add(fmt::format("GQA held-out loss close to MHA's (within {} nats)", band), mha.heldout_loss,
          gq.heldout_loss, band, "", 4);
  cmp.add(fmt::format("MQA held-out loss close to MHA's (within {} nats)", band), mha.heldout_loss,
          mq.heldout_loss, band, "MQA shares one key/value head among all queries", 4);
  int64_t differ = 0;
  for (const Agreement& a : agree) differ += a.mismatched;
  cmp.add_exact("cached decoding gives the same tokens as recomputation", "yes",
                differ == 0 ? "yes" : "no");
  // Per-token cost with the cache, against the prefix length: the document's cached scores are
  // (seqlen, cache_len + seqlen), so only that row grows; "roughly constant" is the usual claim.
  cmp.add("cached step time growth exponent in P (~0: roughly constant)", 0.0, cached_slope, 0.25,
          fmt::format("timing, machine-dependent; the counted work of the step grows {:.2f} x "
                      "over the prefixes because its query reads all P cached keys (d_model = "
                      "{} is small next to P)",
                      macs_growth, o.d_model),
          2);
  cmp.add("recomputation time growth exponent (top 3 octaves of P; attention ~ P^2)", 2.0,
          recompute_slope, 0.6,
          "timing, machine-dependent; below P ~ d_ff the per-token projections and "
          "feed-forward (linear in P) still dominate",
          2);
  cmp.add_exact("caching is faster at the longest prefix (every variant)", "yes", [&] {
    for (size_t i = 0; i < vs.size(); ++i)
      if (dt.cached_ms[i].back() >= dt.recompute_ms[i].back()) return std::string("no");
    return std::string("yes");
  }());
  ctx.compare(cmp);

  // ---- figures and CSVs ----
  CsvWriter tcsv =
      ctx.csv("decode_times", {"P", "mha_cached_ms", "mha_recompute_ms", "gqa_cached_ms",
                               "gqa_recompute_ms", "mqa_cached_ms", "mqa_recompute_ms"});
  for (size_t j = 0; j < ps.size(); ++j)
    tcsv.row({ps[j], dt.cached_ms[0][j], dt.recompute_ms[0][j], dt.cached_ms[1][j],
              dt.recompute_ms[1][j], dt.cached_ms[2][j], dt.recompute_ms[2][j]});
  CsvWriter lcsv = ctx.csv("loss", {"step", "mha_loss", "gqa_loss", "mqa_loss"});
  for (size_t s = 0; s < mha.losses.size(); ++s)
    lcsv.row({static_cast<double>(s + 1), mha.losses[s], gq.losses[s], mq.losses[s]});

  const char* colours[] = {"#f59e0b", "#3b82f6", "#10b981"};
  LinePlot tp;
  for (size_t i = 0; i < vs.size(); ++i) {
    tp.series.push_back({vs[i].name + ", KV cache", ps, dt.cached_ms[i], colours[i]});
    tp.series.push_back({vs[i].name + ", recompute", ps, dt.recompute_ms[i], colours[i], true});
  }
  tp.log_x = tp.log_y = true;
  tp.title = "Time to decode one token after a prefix of P";
  tp.x_label = "prefix length P";
  tp.y_label = "ms";
  ctx.figure("decode_time", line_plot_svg(tp),
             "With the cache the step grows slowly with P; recomputing the prefix grows ~P^2");

  BarChart bc;
  bc.title = "KV-cache bytes per generated token";
  bc.y_label = "bytes";
  BarSeries measured{"measured", {}, "#3b82f6"}, closed{"2 L Hkv D x 4", {}, "#9ca3af"};
  for (size_t i = 0; i < vs.size(); ++i) {
    bc.labels.push_back(vs[i].name);
    measured.values.push_back(static_cast<double>(bytes[i].per_token));
    closed.values.push_back(static_cast<double>(bytes[i].closed_form));
  }
  bc.series = {measured, closed};
  ctx.figure("cache_bytes", bar_chart_svg(bc), "The cache shrinks by nhead / n_kv_heads");

  LinePlot lp;
  std::vector<double> xs(mha.losses.size());
  for (size_t s = 0; s < xs.size(); ++s) xs[s] = static_cast<double>(s + 1);
  for (size_t i = 0; i < vs.size(); ++i)
    lp.series.push_back({vs[i].name, xs, vs[i].losses, colours[i], false, false});
  lp.title = "Training loss (next character, nats)";
  lp.x_label = "step";
  lp.y_label = "loss";
  ctx.figure("loss", line_plot_svg(lp), "Same steps, same batches: MHA, GQA and MQA");
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
  e.typical_time = "~2 min";
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
