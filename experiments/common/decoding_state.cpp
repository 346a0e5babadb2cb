#include "experiments/common/decoding_state.h"

#include "experiments/kit/kit.h"
#include "nn/attention/linear_attention.h"
#include "nn/attention/multihead_attention.h"
#include "nn/attention/sliding_window.h"
#include "nn/ssm/selective_ssm.h"

namespace attn::experiments {

namespace {

constexpr int64_t kFloatBytes = sizeof(real);

int64_t bytes_of(const Var& v) {
  return v.numel() * kFloatBytes;
}

// The stack run both ways on x (1,T,d): parallel(l, h) is layer l on the whole sequence,
// step(l, h_t) is layer l on one position (1,1,d), updating that layer's state, and
// state_bytes() adds up what every layer keeps. Returns the bytes after each step and how far
// the decoded outputs are from the parallel ones.
DecodingTrace run_both_ways(int64_t layers,
                            const Tensor& x,
                            const std::function<Var(int64_t, const Var&)>& parallel,
                            const std::function<Var(int64_t, const Var&)>& step,
                            const std::function<int64_t()>& state_bytes) {
  NoGrad off;
  Var h = Var::constant(x);
  for (int64_t l = 0; l < layers; ++l) h = parallel(l, h);
  const int64_t steps = x.size(1);
  DecodingTrace trace;
  std::vector<Var> outs;
  for (int64_t t = 0; t < steps; ++t) {
    Var y = slice(Var::constant(x), 1, t, t + 1);
    for (int64_t l = 0; l < layers; ++l) y = step(l, y);
    outs.push_back(y);
    trace.state_bytes.push_back(state_bytes());
  }
  trace.max_abs_diff = max_abs_diff(concat(outs, 1).value(), h.value());
  return trace;
}

}  // namespace

DecodingTrace decode_softmax(
    int64_t d_model, int64_t nhead, int64_t layers, int64_t steps, Generator& gen) {
  std::vector<std::shared_ptr<nn::MultiheadAttention>> mha;
  for (int64_t l = 0; l < layers; ++l)
    mha.push_back(std::make_shared<nn::MultiheadAttention>(
        d_model, nhead, gen, nn::MultiheadAttentionOptions{.separate_projections = true}));
  std::vector<nn::KVCache> caches(static_cast<size_t>(layers));
  const Tensor x = Tensor::randn({1, steps, d_model}, gen);
  return run_both_ways(
      layers, x,
      [&](int64_t l, const Var& h) {
        return mha[l]->forward(h, h, h, nn::AttentionMasks{.causal = true}).out;
      },
      [&](int64_t l, const Var& h) {
        // With a cache, the one new query attends over every cached key and itself.
        return mha[l]->forward(h, h, h, nn::AttentionMasks{.causal = true}, &caches[l]).out;
      },
      [&] {
        int64_t b = 0;
        for (const nn::KVCache& c : caches)
          if (c.filled) b += bytes_of(c.k) + bytes_of(c.v);
        return b;
      });
}

DecodingTrace decode_window(
    int64_t d_model, int64_t nhead, int64_t window, int64_t layers, int64_t steps, Generator& gen) {
  std::vector<std::shared_ptr<nn::SlidingWindowAttention>> swa;
  for (int64_t l = 0; l < layers; ++l)
    swa.push_back(
        std::make_shared<nn::SlidingWindowAttention>(d_model, nhead, window, gen, /*causal=*/true));
  // Per layer, the keys and values (1,H,n,D) of the last n <= window positions.
  std::vector<Var> keys(static_cast<size_t>(layers)), values(static_cast<size_t>(layers));
  std::vector<bool> filled(static_cast<size_t>(layers), false);
  const Tensor x = Tensor::randn({1, steps, d_model}, gen);
  return run_both_ways(
      layers, x, [&](int64_t l, const Var& h) { return swa[l]->forward(h).out; },
      [&](int64_t l, const Var& h) {
        const nn::HeadsQKV a = swa[l]->project(h);  // (1,H,1,D) each
        const Var k = filled[l] ? concat({keys[l], a.k}, 2) : a.k;
        const Var v = filled[l] ? concat({values[l], a.v}, 2) : a.v;
        // The query at t sees t-w..t: every key in hand (at most w + 1), no mask needed.
        const Var y = nn::scaled_dot_product_attention(a.q, k, v).out;
        // Keep the last w for the next step (w = 0: nothing, the next query sees itself only).
        const int64_t n = k.size(2), keep = std::min(n, window);
        filled[l] = keep > 0;
        if (filled[l]) {
          keys[l] = slice(k, 2, n - keep, n);
          values[l] = slice(v, 2, n - keep, n);
        }
        return swa[l]->combine(y);
      },
      [&] {
        int64_t b = 0;
        for (int64_t l = 0; l < layers; ++l)
          if (filled[l]) b += bytes_of(keys[l]) + bytes_of(values[l]);
        return b;
      });
}

DecodingTrace decode_linear(
    int64_t d_model, int64_t nhead, int64_t layers, int64_t steps, Generator& gen) {
  std::vector<std::shared_ptr<nn::LinearAttention>> la;
  for (int64_t l = 0; l < layers; ++l)
    la.push_back(std::make_shared<nn::LinearAttention>(d_model, nhead, gen, /*causal=*/true));
  std::vector<nn::FastWeightState> states(static_cast<size_t>(layers));
  const Tensor x = Tensor::randn({1, steps, d_model}, gen);
  return run_both_ways(
      layers, x, [&](int64_t l, const Var& h) { return la[l]->forward(h); },
      [&](int64_t l, const Var& h) {
        const nn::HeadsQKV a = la[l]->project(h);
        return la[l]->combine(nn::linear_attention_step(a.q, a.k, a.v, states[l]));
      },
      [&] {
        int64_t b = 0;
        for (const nn::FastWeightState& s : states)
          if (s.steps > 0) b += bytes_of(s.s) + bytes_of(s.z);
        return b;
      });
}

DecodingTrace decode_s6(int64_t d_model,
                        int64_t d_state,
                        const S6MixerOptions& options,
                        int64_t layers,
                        int64_t steps,
                        Generator& gen) {
  std::vector<std::shared_ptr<nn::SelectiveSSM>> ssm;
  std::vector<nn::SelectiveSsmState> states;
  for (int64_t l = 0; l < layers; ++l) {
    // The module s6_mixer builds, taken out of its Mixer to reach step() and the state.
    ssm.push_back(std::dynamic_pointer_cast<nn::SelectiveSSM>(
        s6_mixer(d_model, d_state, gen, options).module));
    states.push_back(ssm.back()->initial_state(1));
  }
  const Tensor x = Tensor::randn({1, steps, d_model}, gen);
  return run_both_ways(
      layers, x, [&](int64_t l, const Var& h) { return ssm[l]->forward(h); },
      [&](int64_t l, const Var& h) { return ssm[l]->step(h, states[l]); },
      [&] {
        int64_t b = 0;
        for (const nn::SelectiveSsmState& s : states) b += bytes_of(s.h) + bytes_of(s.conv);
        return b;
      });
}

int64_t softmax_state_bytes(int64_t d_model, int64_t layers, int64_t t) {
  return 2 * layers * d_model * t * kFloatBytes;
}

int64_t window_state_bytes(int64_t d_model, int64_t window, int64_t layers, int64_t t) {
  return 2 * layers * d_model * std::min(t, window) * kFloatBytes;
}

int64_t linear_state_bytes(int64_t d_model, int64_t nhead, int64_t layers) {
  const int64_t d = d_model / nhead;
  return layers * nhead * (d * d + d) * kFloatBytes;
}

}  // namespace attn::experiments
