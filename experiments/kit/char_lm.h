// The small character language models that several experiments train on a CharCorpus
// (length-extrapolation, norms-angles, ffn-memory): the decoder's options from the model group,
// and the first held-out windows an evaluation reads.
//
//   nn::DecoderOnlyOptions o = kit::char_lm_options(read_model(cfg), vocab, /*max_len=*/256);
//   const data::LanguageModelTask task(corpus, 32, data::Split::kTrain);
//   train::fit(model, settings, [&](const train::BatchPart& part) {
//     return kit::language_model_step(task, settings.batch_size, gen, part,   // kit.h
//                                     [&](const Tensor& ids) { return model.forward(ids); });
//   });
//   std::vector<data::Example> held = kit::first_windows(corpus, 64, 200);   // up to 200
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "autograd/functional.h"
#include "autograd/generator.h"
#include "data/batch.h"
#include "data/corpus.h"
#include "nn/transformer/decoder_only.h"
#include "train/fit.h"
#include "train/options/groups.h"

namespace attn::experiments::kit {

// A decoder of the model group's width, heads, depth, feed-forward width and dropout, over
// `vocab` tokens with positions up to max_len (the rest at DecoderOnlyOptions' defaults).
inline nn::DecoderOnlyOptions char_lm_options(const train::options::ModelSettings& m,
                                              int64_t vocab,
                                              int64_t max_len) {
  nn::DecoderOnlyOptions o;
  o.vocab_size = vocab;
  o.max_len = max_len;
  o.d_model = m.d_model;
  o.nhead = m.nhead;
  o.num_layers = m.num_layers;
  o.dim_feedforward = m.dim_ff;
  o.dropout = m.dropout;
  return o;
}

// The first min(n, available) windows of `len` characters of the corpus's held-out text (the
// same text at every length).
inline std::vector<data::Example> first_windows(const data::CharCorpus& corpus,
                                                int64_t len,
                                                int64_t n) {
  std::vector<data::Example> all =
      data::LanguageModelTask(corpus, len, data::Split::kValidation).all_windows();
  all.resize(std::min(all.size(), static_cast<size_t>(n)));
  return all;
}

}  // namespace attn::experiments::kit
