// The vocabulary part of softmax-variants: full softmax, adaptive softmax and hierarchical
// (Huffman) softmax as the output layer of one toy language model over a Zipf vocabulary, at
// several vocabulary sizes V: held-out perplexity after the same training, time per token of a
// training step, and the Huffman tree's decisions per token against log2 V.
//
//   add_vocab_fields(e.config);                 // in the registration
//   vocab_part(cfg, ctx, cmp);                  // in run: tables, figures, results and rows
#pragma once

#include "experiments/config.h"
#include "experiments/report/compare.h"
#include "experiments/run_context.h"

namespace attn::experiments {

void add_vocab_fields(Config& config);
void vocab_part(const Config& cfg, RunContext& ctx, DocumentComparison& cmp);

}  // namespace attn::experiments
