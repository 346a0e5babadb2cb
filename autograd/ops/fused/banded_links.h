// The random links of banded attention, checked and inverted for its key pass:
//
//   const LinkedRows by_key = linked_rows(links, t_len, window, causal, global_index);
//   for (int64_t e = by_key.start[j]; e < by_key.start[j + 1]; ++e)
//     use(by_key.row[e], by_key.slot[e]);   // row `row` reads key j through its link slot `slot`
//
// Used by autograd/ops/fused/banded_attention.cpp only.
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/random_links.h"

namespace attn {

// Per key j, the rows that link to it: entries [start[j], start[j+1]) of row and slot.
struct LinkedRows {
  std::vector<int64_t> start;  // (T + 1)
  std::vector<int64_t> row;    // the linking row i
  std::vector<int64_t> slot;   // and the link slot n (0 .. r-1) it used
};

// Enforces random_links.h's rule (an ordinary row's links lie outside its band, are not global,
// causal in its past, and are distinct; a global row has none), so that no key is read twice,
// throwing attn::Error naming the row, the key and the broken rule; then builds the inverse
// lists: O(T r). global_index (T) holds m for the global token globals[m], else -1.
LinkedRows linked_rows(const RandomLinks& links,
                       int64_t t_len,
                       int64_t window,
                       bool causal,
                       const std::vector<int64_t>& global_index);

}  // namespace attn
