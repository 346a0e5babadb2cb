// The last feed-forward block of a trained character GPT read as a key-value memory:
//   FFN(x) = sum_i  m_i v_i,   m_i = act(k_i . x + b_i)
// where the key k_i is row i of linear1.weight (d_ff, d_model) and the value v_i is column i of
// linear2.weight (d_model, d_ff). A key "fires" (large m_i) on some inputs; its value is then
// added to the residual stream, which the final LayerNorm and the unembedding turn into logits.
//
//   KeyActivations a = last_block_keys(gpt, heldout_windows);   // a.act (N, d_ff)
//   Tensor vl = value_logits(gpt);                               // (d_ff, V)
//   auto keys = read_top_keys(a, vl, is_char, {.keys = 16, .contexts = 20, .promoted = 3});
//   Agreement g = agreement_against_shuffled(keys, a, /*shuffles=*/200, gen);
//   g.ours;  g.shuffled.mean;   // values agree with their own keys' next characters, or not
//
// What a value promotes: the direct path from v_i to the logits is E LN(r + m_i v_i + ...),
// and LayerNorm is (r - mean(r)) / std(r) * gamma + beta; the part that v_i contributes is
// m_i / std(r) * E (gamma * (v_i - mean(v_i))). The factor m_i / std(r) is positive where a key
// fires, so the ranking of the characters by E (gamma * (v_i - mean(v_i))) is the same at every
// position: those are the characters the value pushes up (the "logit lens" of a single value).
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/generator.h"
#include "autograd/tensor.h"
#include "data/task.h"
#include "experiments/kit/spread.h"
#include "nn/transformer/decoder_only.h"

namespace attn::experiments {

struct KeyActivations {
  Tensor act;  // (N, d_ff): m_i at every held-out position (row = window * T + position)
  std::vector<int64_t> next;  // (N) the character that follows each position in the text
  int64_t block_len = 0;      // T, to find a row's window and position
  // max |logits rebuilt from the parts - gpt.forward|: proves the decomposition is the model.
  double rebuild_gap = 0;
  double max_logit = 0;  // max |logit| of the model, the scale of that gap's rounding
};

// Runs every window (all of length T) through the model in eval mode, no gradient. The model
// must use learned positions and pre-norm blocks with a feed-forward (DecoderOnlyOptions'
// defaults); throws attn::Error otherwise.
KeyActivations last_block_keys(nn::DecoderOnlyTransformer& gpt,
                               const std::vector<data::Example>& windows);

// (d_ff, V): row i = E (gamma * (v_i - mean(v_i))), E the (tied or separate) unembedding.
Tensor value_logits(const nn::DecoderOnlyTransformer& gpt);

struct KeyReadingOptions {
  int64_t keys = 16;      // the keys with the strongest top contexts
  int64_t contexts = 20;  // top-firing positions per key
  int64_t promoted = 3;   // top characters per value
};

struct KeyReading {
  int64_t key = 0;
  double strength = 0;            // mean activation over its top contexts
  std::vector<int64_t> rows;      // its top contexts (rows of act), strongest first
  std::vector<int64_t> promoted;  // its value's top characters, strongest first
  double agreement = 0;           // share of its contexts whose next character is promoted
};

// is_char (V): which token ids a value may promote (the corpus's characters, not specials).
std::vector<KeyReading> read_top_keys(const KeyActivations& a,
                                      const Tensor& value_logits,
                                      const std::vector<bool>& is_char,
                                      const KeyReadingOptions& o);

// The share of (key, context) pairs whose next character is among the value's promoted ones,
// for the keys' own values (ours) and with the values dealt to the keys by random derangements
// (each key paired with another key's value: the chance level of this text and these values).
struct Agreement {
  double ours = 0;
  kit::Spread shuffled;  // over the shuffles
};
Agreement agreement_against_shuffled(const std::vector<KeyReading>& keys,
                                     const KeyActivations& a,
                                     int64_t shuffles,
                                     Generator& gen);

}  // namespace attn::experiments
