// length-extrapolation's measurements per variant and its claims against the documents
// (experiments/positions/length_extrapolation.cpp trains and measures; this file judges).
//
//   std::vector<VariantRun> runs = ...;                  // one per positional scheme
//   compare_with_documents(cfg, ctx, runs, bigram);      // drops, results.json, the claims
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiments/config.h"
#include "experiments/run_context.h"

namespace attn::experiments::extrapolation {

struct VariantRun {
  std::string name;
  std::vector<double> accuracy, loss, far_mass;  // per evaluated length
  std::vector<int64_t> scored;                   // characters scored per length
  double seconds = 0;
};

// The documents' claims, each judged on the drop from the training length to a longer one, and
// `not judged` where a variant did not train in range (no better than `bigram`, the accuracy of
// the bigram guess). Records each variant's in-distribution accuracy and worst drop.
void compare_with_documents(const Config& cfg,
                            RunContext& ctx,
                            const std::vector<VariantRun>& runs,
                            double bigram);

}  // namespace attn::experiments::extrapolation
