// BERT's masked-language-model corruption: choose 15% of the tokens to predict; of those,
// 80% become MASK, 10% a random token, 10% stay as they are.
//
//   using namespace attn::data;
//   MlmBatch m = mlm_mask(batch.src, tok.vocab_size(), gen);
//   // model input m.input (B,T); loss = cross_entropy(logits, m.labels, kIgnoreIndex)
//
// Special tokens (PAD, BOS, EOS, ...) are never chosen. Each regular token is chosen
// independently with probability select_prob (as Hugging Face's collator does). labels holds
// the original id at chosen positions and kIgnoreIndex elsewhere. Random replacements are drawn
// uniformly from the regular (non-special) tokens.
#pragma once

#include "autograd/generator.h"
#include "autograd/tensor.h"

namespace attn::data {

struct MlmConfig {
  double select_prob = 0.15;  // fraction of tokens to predict
  double mask_prob = 0.8;     // of those: replaced by MASK
  double random_prob = 0.1;   // of those: replaced by a random token (the rest stay unchanged)
};

struct MlmBatch {
  Tensor input;   // (B,T) corrupted ids
  Tensor labels;  // (B,T) original id where chosen, kIgnoreIndex elsewhere
  int64_t num_selected = 0;
};

// tokens (B,T) ids -> corrupted input and labels. Throws for probabilities outside [0,1] or
// mask_prob + random_prob > 1, and for a vocabulary without regular tokens.
MlmBatch mlm_mask(const Tensor& tokens,
                  int64_t vocab_size,
                  Generator& gen,
                  const MlmConfig& config = {});

}  // namespace attn::data
