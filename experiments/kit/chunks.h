// A held-out set cut into evaluation batches: consecutive slices of at most n items.
//
//   for (const std::vector<data::Example>& part : kit::chunks(windows, 32))
//     nll.add(model.forward(data::collate_language_model(part).tgt_in).value(), ...);
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace attn::experiments::kit {

// xs[0..n), xs[n..2n), ... in order; the last slice may be shorter, none is empty.
template <class T>
std::vector<std::vector<T>> chunks(const std::vector<T>& xs, size_t n) {
  std::vector<std::vector<T>> out;
  for (size_t at = 0; at < xs.size(); at += n)
    out.emplace_back(xs.begin() + static_cast<std::ptrdiff_t>(at),
                     xs.begin() + static_cast<std::ptrdiff_t>(std::min(xs.size(), at + n)));
  return out;
}

}  // namespace attn::experiments::kit
