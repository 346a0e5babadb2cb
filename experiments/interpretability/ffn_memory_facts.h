// ffn-memory's third part: a toy set of facts (a three-letter name -> one letter) that a small
// transformer must memorise, trained at one feed-forward width, its recall measured on every fact.
//
//   const FactSet facts = draw_facts(512, gen);          // "qzk=m", "bta=c", ...
//   FactSettings s{.d_model = 32, .steps = 1500};
//   FactRun r = train_facts(facts, s, /*width=*/64, /*seed=*/1, ctx);
//   r.recall;    // the share of the 512 facts whose letter is the model's top prediction
//
// A fact is the four tokens "a b c =" followed by its value letter. The model is a one-block
// character GPT (nn::DecoderOnlyTransformer, pre-norm, GELU) with dim_feedforward = width; it is
// scored only on the value, predicted at the "=" position. Names are distinct and values are
// drawn at random, so nothing can be inferred: a fact is recalled only if it was stored. Attention
// mixes the three letters linearly (weights times values), so the arbitrary table from names to
// letters has to be held by the nonlinear parts, above all the feed-forward block.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "autograd/generator.h"

namespace attn::experiments {

class RunContext;

// Letters a..z are tokens 0..25, "=" is 26.
constexpr int64_t kFactLetters = 26;
constexpr int64_t kFactVocab = kFactLetters + 1;
constexpr int64_t kFactLength = 4;  // three name letters and "="

struct FactSet {
  std::vector<std::vector<int64_t>> names;  // distinct, three letters each
  std::vector<int64_t> values;              // one letter per name
  int64_t size() const { return static_cast<int64_t>(values.size()); }
  std::string text(int64_t i) const;  // "qzk=m"
};

// n distinct names with random values; throws attn::Error when n exceeds 26^3.
FactSet draw_facts(int64_t n, Generator& gen);

struct FactSettings {
  int64_t d_model = 32, nhead = 2;
  int64_t steps = 1500, batch_size = 128;
  double lr = 3e-3;  // Adam, cosine schedule after a short warmup
};

struct FactRun {
  std::string block;  // "" for the built-in GELU block, else a nn::feed_forward_registry() row
  int64_t width = 0;
  double recall = 0;           // share of facts whose value is the argmax
  int64_t ffn_parameters = 0;  // the feed-forward block's (built in: linear1, linear2, biases)
};

// Trains a fresh model (weights and batch order from `seed`) through kit::fit_settings and
// train::fit, its metrics in <run folder>/training/facts_width_<w>_seed_<s>.csv (with a plugin's
// block: facts_<block>_width_<w>_seed_<s>.csv). `block` names a row of nn::feed_forward_registry()
// used as the model's feed-forward block, "" for the built-in GELU block.
FactRun train_facts(const FactSet& facts,
                    const FactSettings& s,
                    int64_t width,
                    uint64_t seed,
                    const RunContext& ctx,
                    const std::string& block = "");

}  // namespace attn::experiments
