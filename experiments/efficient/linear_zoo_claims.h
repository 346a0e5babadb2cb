// linear-zoo's measurements beyond attention-zoo's parts (linear_zoo.cpp) and the document's
// claims judged on them (linear_zoo_claims.cpp).
//
//   zoo::RowStats s = ...;                 // the trained recall models' attention rows
//   zoo::compare_linear(ctx, vs, accuracies, costs, rows, reach, no_positions);
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "experiments/efficient/attention_zoo_claims.h"

namespace attn::experiments::zoo {

// Per variant (in vs's order): the mean entropy (nats) and the mean largest weight of the rows
// the trained recall model's layers apply, over one held-out batch and all layers; NaN where a
// layer has no normalised rows to read (TransNormer). off_lattice: for the dilated variants, the
// number of nonzero weights off their heads' dilation lattices (0 by construction).
struct RowStats {
  std::vector<double> entropy, max_weight, off_lattice;
};

// How far back one dilated layer reaches: positions whose input changes the last output, and
// the farthest of them, for a layer with every head dilated and for one of local heads.
struct Reach {
  int64_t keys = 0, dilation = 0;
  int64_t atrous_farthest = 0, local_farthest = 0;
  int64_t atrous_positions = 0, local_positions = 0;
};

// Recall of the position-free ablations (T from --recall_pairs): linear attention without
// sinusoidal positions, beside SANA (which has none). NaN when not run.
struct NoPositions {
  double linear_recall = NAN;
};

void compare_linear(RunContext& ctx,
                    const std::vector<ZooVariant>& vs,
                    const Accuracies& a,
                    const Costs& c,
                    const RowStats& rows,
                    const Reach& reach,
                    const NoPositions& no_positions,
                    int64_t eval_size);

}  // namespace attn::experiments::zoo
