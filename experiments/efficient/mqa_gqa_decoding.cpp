#include "experiments/efficient/mqa_gqa_decoding.h"

#include "experiments/kit/kit.h"

namespace attn::experiments {

namespace {

int64_t cache_bytes(const std::vector<nn::KVCache>& caches) {
  int64_t n = 0;
  for (const nn::KVCache& c : caches)
    if (c.filled) n += (c.k.value().numel() + c.v.value().numel());
  return n * static_cast<int64_t>(sizeof(real));
}

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

// Fills v.cached_ms and v.recompute_ms, every variant and both ways interleaved per prefix.
void time_decoding(std::vector<Variant>& vs, const Config& cfg, const std::vector<int64_t>& ids) {
  const std::vector<int64_t> prefixes = cfg.get_ints("prefixes");
  ScopedThreads threads(static_cast<int>(cfg.get_int("timing_threads")));
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
      vs[i].cached_ms.push_back(t[2 * i].median_s * 1e3);
      vs[i].recompute_ms.push_back(t[2 * i + 1].median_s * 1e3);
    }
  }
}

// Counted multiply-adds of one layer for the new token after a prefix of p (mqa_gqa.cpp's top).
double cached_step_macs(const nn::DecoderOnlyOptions& o, int64_t kv_heads, double p) {
  const double d = static_cast<double>(o.d_model), kv = static_cast<double>(kv_heads) * d / o.nhead,
               f = static_cast<double>(o.dim_feedforward);
  return d * (2 * d + 2 * kv) + 2 * d * f + 2 * d * (p + 1);
}

}  // namespace

double cache_ratio(const std::vector<Variant>& vs, size_t i) {
  return static_cast<double>(vs[0].cache.per_token) / static_cast<double>(vs[i].cache.per_token);
}

void cache_part(std::vector<Variant>& vs, const Prompts& p, RunContext& ctx) {
  ctx.section("KV-cache bytes per generated token (read off the cache tensors)");
  const nn::DecoderOnlyOptions& o = vs[0].model->options();
  Table cb(fmt::format("{} layers, D = {}, float32; {} prompts of {} characters", o.num_layers,
                       o.d_model / o.nhead, p.count, p.length),
           {"attention", "kv heads", "bytes / token (measured)", "2 L Hkv D x 4", "MHA / this",
            fmt::format("held after {} tokens", p.length), "k, v shapes (B,Hkv,T,D)"});
  for (size_t i = 0; i < vs.size(); ++i) {
    const CacheBytes& c = vs[i].cache = measure_cache(vs[i], p.prompts, p.next);
    cb.add_row({vs[i].name, std::to_string(vs[i].kv_heads), std::to_string(c.per_token),
                std::to_string(c.closed_form), fixed(cache_ratio(vs, i), 2),
                std::to_string(c.at_prompt), c.shapes_ok ? "yes" : "NO"});
  }
  ctx.table(cb);
  ctx.note(fmt::format(
      "Each layer's cache holds k and v of shape (B, n_kv_heads, T, D): the query heads of a "
      "group read the same cached head, so nothing of size nhead is stored. MHA / GQA = {:.2f} "
      "(nhead / n_kv_heads = {}), MHA / MQA = {:.2f} (nhead = {}). The document's llama3 code "
      "allocates cache_k and cache_v for max_batch_size x max_seq_len up front; here the cache "
      "grows by one position per token (a concat), so the bytes held are always B x T x the "
      "per-token figure ({} bytes for MHA after {} tokens of {} prompts).",
      cache_ratio(vs, 1), o.nhead / vs[1].kv_heads, cache_ratio(vs, 2), o.nhead,
      vs[0].cache.at_prompt, p.length, p.count));
}

void agreement_part(std::vector<Variant>& vs, const Prompts& p, int64_t tokens, RunContext& ctx) {
  ctx.section("Cached and recomputed decoding agree");
  Table ag(
      fmt::format("Greedy decoding of {} new tokens after {} prompts of {} characters", tokens,
                  p.count, p.length),
      {"attention", "tokens compared", "tokens that differ", "max |logit diff|", "max |logit|"});
  for (Variant& v : vs) {
    const Agreement& a = v.agreement = compare_decoding(*v.model, p.prompts, tokens);
    ag.add_row({v.name, std::to_string(a.tokens), std::to_string(a.mismatched),
                sig(a.max_logit_diff, 2), fixed(a.max_abs_logit, 2)});
  }
  ctx.table(ag);
}

DecodeGrowth decode_time_part(std::vector<Variant>& vs,
                              const Config& cfg,
                              const std::vector<int64_t>& ids,
                              RunContext& ctx) {
  const std::vector<int64_t> prefixes = cfg.get_ints("prefixes");
  const std::vector<double> ps(prefixes.begin(), prefixes.end());
  DecodeGrowth g;
  g.load = load_average();
  time_decoding(vs, cfg, ids);
  ctx.section(fmt::format("Decode time for one token after a prefix of P ({} thread{})",
                          num_threads(), num_threads() == 1 ? "" : "s"));
  std::vector<std::string> header{"P"};
  for (const Variant& v : vs)
    header.insert(header.end(), {v.name + " cached (ms)", "recompute (ms)"});
  header.push_back("MHA recompute / cached");
  Table tt("Median of interleaved rounds, batch 1", header);
  for (size_t j = 0; j < ps.size(); ++j) {
    std::vector<std::string> row{std::to_string(prefixes[j])};
    for (const Variant& v : vs)
      row.insert(row.end(), {fixed(v.cached_ms[j], 3), fixed(v.recompute_ms[j], 3)});
    row.push_back(fixed(vs[0].recompute_ms[j] / vs[0].cached_ms[j], 1));
    tt.add_row(row);
  }
  ctx.table(tt);
  const Variant& mha = vs[0];
  const nn::DecoderOnlyOptions& o = mha.model->options();
  g.cached_slope = log_log_slope(ps, mha.cached_ms);
  g.recompute_slope = log_log_slope(ps, mha.recompute_ms, ps.back() / 8);
  g.macs_growth =
      cached_step_macs(o, o.nhead, ps.back()) / cached_step_macs(o, o.nhead, ps.front());
  ctx.note(fmt::format(
      "From P = {} to P = {} ({:.0f} x longer) the MHA cached step's time grows {:.2f} x "
      "(log-log slope {:.2f}) and recomputation's {:.1f} x (slope {:.2f} over the top three "
      "octaves). The counted multiply-adds of the cached step grow {:.2f} x: its projections and "
      "feed-forward are fixed, but its query still reads all P cached keys and values, and the "
      "concat copies the cache once per token. 1-minute load average before timing: {:.1f}; "
      "each cell is the median of up to {} rounds (fewer, at least {}, when a round is slow).",
      prefixes.front(), prefixes.back(), ps.back() / ps.front(),
      mha.cached_ms.back() / mha.cached_ms.front(), g.cached_slope,
      mha.recompute_ms.back() / mha.recompute_ms.front(), g.recompute_slope, g.macs_growth, g.load,
      cfg.get_int("reps"), kMinTimedRounds));
  return g;
}

}  // namespace attn::experiments
