// The untrained self-attention of 002 §39.5 over the characters of a sentence, shared by the
// attention-heatmap, query-bars and mha-heads experiments.
//
//   attn::Generator gen(2);
//   auto s = attn::experiments::embed_characters("the cat sat on the mat", 32, gen);
//   s.tokens;   // {"t", "h", "e", " ", "c", ...}, one per character
//   s.x;        // (1, T, 32): an nn::Embedding of the characters (N(0,1), as PyTorch)
//   attn::experiments::SingleHead h = attn::experiments::single_head(s.x, 16, gen);
//   h.weights;  // (1, T, T)
//
// The vocabulary is the sentence's distinct characters in order of first appearance (the
// document uses a Python set, whose order is arbitrary; only the identity of each row matters).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "autograd/generator.h"
#include "autograd/var.h"
#include "experiments/config.h"

namespace attn::experiments {

// The fields of 002 §39.5's setting, shared by attention-heatmap and query-bars: sentence,
// d_model 32, d_k 16, seed 2 (the seed the document gives PyTorch; same seed, same weights).
void add_sentence_fields(Config& config);

struct EmbeddedSentence {
  std::vector<std::string> tokens;  // the characters, in order
  std::vector<std::string> vocab;   // distinct characters, first appearance first
  Tensor ids;                       // (1, T) vocabulary ids
  Var x;                            // (1, T, d_model)
};

EmbeddedSentence embed_characters(const std::string& sentence, int64_t d_model, Generator& gen);

struct SingleHead {
  Tensor weights;  // (1,T,T) softmax(Q K^T / sqrt(d_k))
  Tensor out;      // (1,T,d_k) weights V
};

// One head with Q, K, V = x W_Q, x W_K, x W_V: three bias-free nn::Linear (d_model -> d_k)
// drawn from gen in that order, then nn::scaled_dot_product_attention. x (1,T,d_model).
// scale = false drops the 1/sqrt(d_k).
SingleHead single_head(const Var& x, int64_t d_k, Generator& gen, bool scale = true);

// Summary numbers of an attention matrix (rows are distributions).
struct AttentionSpread {
  double mean_entropy_ratio;  // mean over rows of H(row) / log(T): 1 = uniform, 0 = one-hot
  double max_weight;          // the largest single weight
  double mean_row_max;        // average over rows of the row's largest weight
  double min_weight;
};
AttentionSpread attention_spread(const Tensor& weights);  // (...,T,T): the last two axes

}  // namespace attn::experiments
