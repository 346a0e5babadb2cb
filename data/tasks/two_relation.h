// The two-relation toy of the course's section 39.7.1 (why more than one head).
//
//   using namespace attn::data;
//   TwoRelationTask toy({});                     // T = 4 tokens of 2 content + 2 position dims
//   attn::Generator gen(11);
//   TwoRelationBatch b = toy.sample(32, gen);    // b.x (32,4,4)
//   // train attention maps A (B,T,T): loss = mse(A_head0, b.target_position)
//   //                                       + mse(A_head1, b.target_content)
//
// Each token is [content (content_dims) | position code (position_dims)]. Contents are N(0,1)
// except at one random "planted" position per sequence, whose content is the unit vector
// [1, 0, ...]. Two target attention maps, for every query row:
//   target_position: all weight on key position `target_position` (2 by default), whatever
//                    the content — a relation of positions;
//   target_content:  all weight on the planted token, wherever it is — a relation of content.
// One head has one bilinear form q^T W_Q W_K^T k and must compromise between the two; two heads
// can each take one.
//
// Position codes: kDocument reproduces the course's code exactly, which takes the first
// position_dims columns of the T x T identity (so with T = 4 and 2 dims, positions 2 and 3
// both get [0, 0] and cannot be told apart by position alone). kBinary writes position p in
// binary instead (needs 2^position_dims >= T), which gives every position its own code.
#pragma once

#include <vector>

#include "autograd/generator.h"
#include "autograd/tensor.h"

namespace attn::data {

enum class PositionCode { kDocument, kBinary };

struct TwoRelationBatch {
  Tensor x;                      // (B, T, content_dims + position_dims)
  Tensor target_position;        // (B, T, T) rows one-hot at target_position
  Tensor target_content;         // (B, T, T) rows one-hot at the planted position
  std::vector<int64_t> planted;  // (B) where the [1, 0, ...] content sits
};

class TwoRelationTask {
 public:
  struct Config {
    int64_t seq_len = 4;
    int64_t content_dims = 2;
    int64_t position_dims = 2;
    int64_t target_position = 2;
    PositionCode position_code = PositionCode::kDocument;
  };
  // Throws attn::Error naming the field for non-positive sizes, a target position outside
  // [0, seq_len), or too few position dims for kBinary.
  explicit TwoRelationTask(Config config);

  TwoRelationBatch sample(int64_t batch, Generator& gen) const;
  int64_t feature_dims() const { return config_.content_dims + config_.position_dims; }
  const Config& config() const { return config_; }

 private:
  real position_bit(int64_t pos, int64_t bit) const;
  Config config_;
};

}  // namespace attn::data
