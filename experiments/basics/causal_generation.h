// causal-mask's second part, 003's Check Your Understanding 2: why a model that generates needs
// the causal mask and a classifier does not, measured on one toy language.
//
//   add_causal_generation_fields(e.config);   // gen_steps, gen_d_model, gen_eval
//   causal_generation(cfg, ctx);              // four small models, a table, one comparison
//
// The language: each sequence is an arithmetic progression modulo V = 16,
// x_t = (s + r t) mod V, with its start s and stride r in {1, 2, 3} drawn per sequence. Any two
// neighbouring tokens give the stride, so from position 1 on the next token is certain, while at
// position 0 it is a guess among three (1/3 is the best a model that cannot see ahead can do).
//
// 1. Generation. Two nn::DecoderOnlyTransformers learn to predict x_{t+1} at every position t,
//    one with the causal mask and one without (DecoderOnlyOptions::causal = false: every
//    position sees the whole input). Teacher-forced, the two-sided model finds x_{t+1} in its own
//    input and copies it, so it is right even at position 0. Generating, that token does not exist
//    yet: from a two-token prompt it must continue by itself, which it never learned. The causal
//    model's teacher-forced score is honest, and it continues the progression exactly.
// 2. Classification. The label is the stride, read at the first position (where BERT reads its
//    [CLS] token). The two-sided model sees the whole sequence from there; a causal one sees a
//    single token. A classifier is given the whole input at once and predicts nothing about the
//    future, so nothing needs hiding from it.
#pragma once

#include "experiments/config.h"

namespace attn::experiments {

class RunContext;

void add_causal_generation_fields(Config& config);
void causal_generation(const Config& cfg, RunContext& ctx);

}  // namespace attn::experiments
