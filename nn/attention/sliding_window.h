// Sliding-window (local) attention with optional global tokens and random links (Mistral,
// Longformer, BigBird).
//
//   using namespace attn::nn;
//   Tensor m = sliding_window_mask(/*t=*/16, /*window=*/2);       // (16,16), 1 = hidden
//   Tensor g = sliding_window_mask(16, 2, /*causal=*/false, {0}); // token 0 is global
//   SdpaOptions o;  o.masks.attn_mask = m;                        // use with any sdpa call
//   SlidingWindowAttention swa(/*d_model=*/64, /*nhead=*/4, /*window=*/8, gen);
//   AttentionOutput a = swa.forward(x);                           // x (B,T,64); a.weights banded
//   SlidingWindowAttention bigbird(64, 4, 8, gen, /*causal=*/false, /*global_tokens=*/{0},
//                                  /*bias=*/true, /*random_links=*/3, /*random_seed=*/1);
//
// Query i sees key j when |i - j| <= window (causal: 0 <= i - j <= window), so each token reads
// at most 2*window+1 (causal: window+1) neighbours; stacking L layers widens the receptive field
// to L*window. A global token g sees every key and is seen by every query (within the causal
// limit when causal: g sees j <= g, and every i >= g sees g) — the way a [CLS] token gathers
// the whole sequence. Random links (BigBird, autograd/random_links.h; random_links > 0): each
// ordinary query also reads r keys drawn at random among those it would not read otherwise, so
// that any two positions are joined in few hops. They are drawn at every forward from
// Generator(random_seed) for the current T (T is unknown at construction): the same links for
// every forward at a given T, on the fast and the reference path alike, and the same for every
// batch row and head (BigBird draws per head; one pattern keeps the mask (T,T)). The mask follows
// sdpa's convention: 1 = NOT allowed. This layer shows the pattern with a mask over the full score
// matrix (clear, and gives weights to plot), O(T^2) in time and memory: the reference path. On the
// fast path (attn::reference_mode() off), without a padding mask, forward calls banded_attention
// (autograd/functional.h), which computes the same outputs and gradients from the band and the
// global rows and columns and the links alone, O(T (window + g + r))
// (tests/nn/banded_attention_test.cpp; docs/performance.md, W9); it returns no weights then
// (AttentionOutput::weights is an empty Var()).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "autograd/generator.h"
#include "autograd/random_links.h"
#include "nn/attention/projected_attention.h"
#include "nn/attention/sdpa.h"

namespace attn::nn {

// (T,T) 0/1 mask, 1 = hidden. window >= 0; global token positions in [0, T); links: row i also
// sees links.key(i, n) (its random links; draw_random_links, with as many rows as t).
Tensor sliding_window_mask(int64_t t,
                           int64_t window,
                           bool causal = false,
                           const std::vector<int64_t>& global_tokens = {},
                           const RandomLinks& links = {});

// (Tq,Tk) 0/1 mask of a causal window for the LAST tq of tk positions (a decoding step with a KV
// cache has tq = 1): query i sits at position p = tk - tq + i and sees key j when
// 0 <= p - j <= window. With tq = tk it equals sliding_window_mask(t, window, true).
Tensor causal_window_mask(int64_t tq, int64_t tk, int64_t window);

// Multi-head self-attention restricted to the window. Parameters q_proj, k_proj, v_proj,
// out_proj (see projected_attention.h).
class SlidingWindowAttention : public ProjectedAttention {
 public:
  SlidingWindowAttention(int64_t d_model,
                         int64_t nhead,
                         int64_t window,
                         Generator& gen,
                         bool causal = false,
                         std::vector<int64_t> global_tokens = {},
                         bool bias = true,
                         int64_t random_links = 0,
                         uint64_t random_seed = 0);

  // x (B,T,d_model) -> out (B,T,d_model), weights (B,H,T,T) (zero outside the window; Var() on
  // the banded fast path).
  // key_padding_mask (B,T), 1 = padding, as in sdpa.
  AttentionOutput forward(const Var& x,
                          const std::optional<Tensor>& key_padding_mask = std::nullopt) const;

  int64_t window() const { return window_; }
  bool causal() const { return causal_; }
  const std::vector<int64_t>& global_tokens() const { return global_; }
  int64_t random_links() const { return random_links_; }
  // The random links forward uses at length t (empty when random_links() is 0).
  RandomLinks links_for(int64_t t) const;

 private:
  int64_t window_;
  bool causal_;
  std::vector<int64_t> global_;
  int64_t random_links_;
  uint64_t random_seed_;
};

}  // namespace attn::nn
