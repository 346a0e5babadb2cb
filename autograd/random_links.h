// BigBird's random links for sliding-window attention: besides its band and the global tokens,
// each query reads r more keys picked at random, so that any two positions are joined through
// few hops (a random graph has a small diameter) while the cost stays O(T (window + g + r)).
//
//   RandomLinks l = draw_random_links(/*t=*/512, /*window=*/16, /*causal=*/false, {0},
//                                     /*per_row=*/3, /*seed=*/7);
//   Var y = banded_attention(q, k, v, 16, false, 0, {0}, l);   // autograd/functional.h
//   Tensor m = nn::sliding_window_mask(512, 16, false, {0}, l); // the dense reference's mask
//
// The rule (the same for the fast path, the dense mask and the PyTorch parity check, which reads
// the list itself): row i of an ordinary (non-global) query may link to a key j that it would
// not otherwise read — outside its band, not a global token and, causal, in its past (j < i -
// window) — and its links are distinct. Global query rows read every key already and get none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace attn {

struct RandomLinks {
  int64_t per_row = 0;        // r: link slots per query row
  std::vector<int64_t> keys;  // (T * per_row): row i's keys in [i r, (i+1) r), -1 = empty slot
  int64_t rows() const { return per_row > 0 ? static_cast<int64_t>(keys.size()) / per_row : 0; }
  int64_t key(int64_t row, int64_t n) const { return keys[static_cast<size_t>(row * per_row + n)]; }
};

// Draws r = per_row links for every ordinary row of a length-t sequence, uniformly among the
// row's allowed keys (the rule above) and without repeats (Floyd's sampling: exactly r draws,
// no rejection), from Generator(seed) row after row: the same arguments give the same links on
// any machine. A row with fewer than r allowed keys links to all of them and leaves the other
// slots empty (-1); each row's keys are sorted. O(T r (r + g)) time.
RandomLinks draw_random_links(int64_t t,
                              int64_t window,
                              bool causal,
                              const std::vector<int64_t>& global_tokens,
                              int64_t per_row,
                              uint64_t seed);

}  // namespace attn
