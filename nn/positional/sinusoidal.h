// Fixed sinusoidal positions (the 2017 transformer): a table added to the token embeddings.
//
//   attn::Tensor pe = attn::nn::sinusoidal_table(512, 64);     // (512,64)
//   attn::nn::SinusoidalPositionalEncoding pos(512, 64);
//   attn::Var h = pos.forward(tok_emb);                        // (B,T,64) + pe[0:T]
//   attn::Var step = pos.forward(next_emb, /*start_pos=*/T);   // one decoding step at position T
//
// PE[pos, 2i] = sin(pos / 10000^(2i/d)),  PE[pos, 2i+1] = cos(pos / 10000^(2i/d)).
// Each pair of columns is a clock with its own period, from 2*pi (i = 0) up to 10000*2*pi, so
// PE[pos+k] is a fixed rotation of PE[pos] for every pos: relative offsets are linear functions
// of the code. The table is a buffer (saved with the module, never trained).
#pragma once

#include <cstdint>

#include "nn/module.h"

namespace attn::nn {

// (max_len, d_model); computed in double, then rounded to attn::real. For odd d_model the last
// column is a sine.
Tensor sinusoidal_table(int64_t max_len, int64_t d_model);

class SinusoidalPositionalEncoding : public Module {
 public:
  SinusoidalPositionalEncoding(int64_t max_len, int64_t d_model);

  // x (B,T,d_model) or (T,d_model) -> x + PE[start_pos : start_pos+T] broadcast over B.
  Var forward(const Var& x, int64_t start_pos = 0) const;

  int64_t max_len() const { return max_len_; }
  int64_t d_model() const { return d_model_; }
  const Tensor& table() const { return pe_; }

 private:
  int64_t max_len_, d_model_;
  Tensor pe_;  // buffer "pe" (max_len, d_model)
};

// Rows [start, start+len) of a (N,C) table as a new (len,C) tensor, with an error naming `who`
// when the range leaves the table (shared by the fixed and learned position modules).
Tensor table_rows(const Tensor& table, int64_t start, int64_t len, const char* who);

}  // namespace attn::nn
