// gpt-bert-encdec, part 4: the three attention masks, read off the trained models.
//
//   gpt_bert::masks(cfg, ctx, gpt, bert, rev, cmp);   // table, figures, three claims in cmp
#pragma once

#include "experiments/common/trained_run.h"
#include "experiments/config.h"
#include "experiments/report/compare.h"
#include "experiments/run_context.h"

namespace attn::experiments::gpt_bert {

// Layer 1 of GPT, BERT and the encoder-decoder on one input each: the mass on later keys and the
// smallest weight per attention (results.json), the mask and weight figures, and the claims that
// GPT and the decoder are causal, BERT and the cross-attention full.
void masks(const Config& cfg,
           RunContext& ctx,
           TrainedRun& gpt,
           TrainedRun& bert,
           TrainedRun& rev,
           DocumentComparison& cmp);

}  // namespace attn::experiments::gpt_bert
