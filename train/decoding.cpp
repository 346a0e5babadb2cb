#include "train/decoding.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "autograd/error.h"

namespace attn::train {

namespace {
// Calls the model and checks the shape of its answer.
Tensor call(const NextLogProbs& next, const std::vector<std::vector<int64_t>>& prefixes) {
  Tensor lp = next(prefixes);
  if (lp.rank() != 2 || lp.size(0) != static_cast<int64_t>(prefixes.size()) || lp.size(1) < 1)
    throw Error(
        fmt::format("decoding: the log-prob callback returned {} for {} prefixes; "
                    "expected (N, V)",
                    shape_str(lp.shape()), prefixes.size()));
  return lp;
}
}  // namespace

std::vector<std::vector<int64_t>> greedy_decode_batch(const NextLogProbs& next,
                                                      std::vector<std::vector<int64_t>> prompts,
                                                      int64_t eos,
                                                      int64_t max_new_tokens) {
  if (max_new_tokens < 1)
    throw Error(fmt::format("greedy_decode: max_new_tokens must be >= 1, got {}", max_new_tokens));
  for (const auto& p : prompts)
    if (p.size() != prompts[0].size())
      throw Error("greedy_decode_batch: prompts must have equal lengths");
  std::vector<std::vector<int64_t>> out(prompts.size());
  std::vector<bool> done(prompts.size(), false);
  for (int64_t step = 0; step < max_new_tokens && !prompts.empty(); ++step) {
    const Tensor lp = call(next, prompts);
    const int64_t V = lp.size(1);
    bool all_done = true;
    for (size_t i = 0; i < prompts.size(); ++i) {
      int64_t tok = eos;
      if (!done[i]) {
        const real* row = lp.data() + static_cast<int64_t>(i) * V;
        tok = std::max_element(row, row + V) - row;
        if (tok == eos)
          done[i] = true;
        else
          out[i].push_back(tok);
      }
      prompts[i].push_back(tok);
      all_done = all_done && done[i];
    }
    if (all_done) break;
  }
  return out;
}

std::vector<int64_t> greedy_decode(const NextLogProbs& next,
                                   const std::vector<int64_t>& prompt,
                                   int64_t eos,
                                   int64_t max_new_tokens) {
  return greedy_decode_batch(next, {prompt}, eos, max_new_tokens)[0];
}

double length_penalty(int64_t length, double alpha, LengthPenalty kind) {
  const auto n = static_cast<double>(length);
  return kind == LengthPenalty::kGnmt ? std::pow((5.0 + n) / 6.0, alpha) : std::pow(n, alpha);
}

std::vector<Hypothesis> beam_search(const NextLogProbs& next,
                                    const std::vector<int64_t>& prompt,
                                    int64_t eos,
                                    const BeamOptions& o) {
  if (o.beam_width < 1 || o.max_new_tokens < 1 || o.num_return < 1 || o.num_return > o.beam_width ||
      o.alpha < 0)
    throw Error(
        fmt::format("beam_search: need beam_width >= 1, max_new_tokens >= 1, "
                    "1 <= num_return <= beam_width, alpha >= 0; got {}, {}, {}, {}",
                    o.beam_width, o.max_new_tokens, o.num_return, o.alpha));
  struct Beam {
    std::vector<int64_t> tokens;  // generated so far
    double log_prob;
  };
  const auto k = static_cast<size_t>(o.beam_width);
  std::vector<Beam> live{{{}, 0.0}};
  std::vector<Hypothesis> finished;
  auto finish = [&](Hypothesis h) {
    finished.push_back(std::move(h));
    std::stable_sort(finished.begin(), finished.end(),
                     [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
    if (finished.size() > k) finished.resize(k);
  };
  const double best_lp = length_penalty(o.max_new_tokens, o.alpha, o.penalty);
  for (int64_t step = 1; step <= o.max_new_tokens && !live.empty(); ++step) {
    std::vector<std::vector<int64_t>> prefixes;
    for (const auto& b : live) {
      prefixes.push_back(prompt);
      prefixes.back().insert(prefixes.back().end(), b.tokens.begin(), b.tokens.end());
    }
    const Tensor lp = call(next, prefixes);
    const int64_t V = lp.size(1);
    struct Cand {
      double log_prob;
      size_t beam;
      int64_t token;
    };
    std::vector<Cand> cands;
    for (size_t b = 0; b < live.size(); ++b)
      for (int64_t t = 0; t < V; ++t)
        cands.push_back({live[b].log_prob + lp[static_cast<int64_t>(b) * V + t], b, t});
    // Best first; ties keep beam order then token order, so results are deterministic.
    std::stable_sort(cands.begin(), cands.end(),
                     [](const Cand& a, const Cand& b) { return a.log_prob > b.log_prob; });
    std::vector<Beam> grown;
    for (const Cand& c : cands) {
      if (grown.size() == k) break;
      if (!std::isfinite(c.log_prob)) break;  // log P = -inf: impossible continuations
      std::vector<int64_t> toks = live[c.beam].tokens;
      if (c.token == eos) {
        finish({toks, c.log_prob, c.log_prob / length_penalty(step, o.alpha, o.penalty), true});
      } else {
        toks.push_back(c.token);
        grown.push_back({std::move(toks), c.log_prob});
      }
    }
    live = std::move(grown);
    // Stop when k hypotheses are finished and no live beam can beat the worst of them.
    if (finished.size() == k) {
      bool can_improve = false;
      for (const auto& b : live)
        can_improve = can_improve || b.log_prob / best_lp > finished.back().score;
      if (!can_improve) break;
    }
    if (step == o.max_new_tokens)
      for (const auto& b : live)
        finish(
            {b.tokens, b.log_prob,
             b.log_prob / length_penalty(static_cast<int64_t>(b.tokens.size()), o.alpha, o.penalty),
             false});
  }
  finished.resize(std::min(finished.size(), static_cast<size_t>(o.num_return)));
  return finished;
}

}  // namespace attn::train
