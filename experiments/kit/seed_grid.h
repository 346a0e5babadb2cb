// The runs of a sweep with seeds: every (cell, seed) pair trained side by side (kit::side_by_side,
// one core each), the results grouped by cell. A cell is one setting of the sweep (a model size,
// a variant); out[c][k] is cell c trained with seed k.
//
//   std::vector<std::vector<SizePoint>> grid = kit::seed_grid(widths.size(), seeds,
//       [&](size_t c, size_t k) { return train_size(widths[c], k); });   // grid[c][k]
//   kit::seed_grid(sizes.size(), seeds, job, kit::Start::kLastCells);    // the largest first
//
// The jobs follow side_by_side's rules (each draws only from generators it makes, and returns
// what it measured). Which job starts first changes no number, only how well the cores are
// shared: when the cells grow in cost, starting the last ones first keeps a long job from
// starting at the end with one core idle.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include "experiments/kit/side_by_side.h"

namespace attn::experiments::kit {

enum class Start { kFirstCells, kLastCells };

template <class Job>
auto seed_grid(size_t cells, size_t seeds, Job&& job, Start start = Start::kFirstCells)
    -> std::vector<std::vector<std::invoke_result_t<Job&, size_t, size_t>>> {
  // Run r is cell r / seeds with seed r % seeds; job i runs r = i, or r = n - 1 - i (the same
  // map both ways).
  const size_t n = cells * seeds;
  const auto run_of = [&](size_t i) { return start == Start::kLastCells ? n - 1 - i : i; };
  auto flat = side_by_side(n, [&](size_t i) { return job(run_of(i) / seeds, run_of(i) % seeds); });
  std::vector<std::vector<std::invoke_result_t<Job&, size_t, size_t>>> grid(cells);
  for (size_t r = 0; r < n; ++r) grid[r / seeds].push_back(std::move(flat[run_of(r)]));
  return grid;
}

}  // namespace attn::experiments::kit
