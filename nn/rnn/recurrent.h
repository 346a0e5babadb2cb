// RNN, GRU and LSTM layers: PyTorch's torch.nn.RNN / GRU / LSTM on attnlab's tape.
//
//   attn::Generator gen(0);
//   attn::nn::LSTM lstm({.input_size = 8, .hidden_size = 16, .num_layers = 2,
//                        .batch_first = true, .bidirectional = true}, gen);
//   attn::nn::RecurrentOutput out = lstm.forward(x);     // x (B,T,8)
//   out.y;          // (B,T,32): last layer's h_t, both directions side by side
//   out.state.h;    // (4,B,16): final h of every layer and direction (PyTorch's h_n)
//   *out.state.c;   // (4,B,16): final LSTM cell state (c_n)
//   lstm.forward(x, out.state.detached());               // carry the state on (truncated BPTT)
//   lstm.forward(x, std::nullopt, {5, 3, 7});            // a padded batch: per-row lengths
//
// Parameters are named, shaped, ordered and initialised exactly as PyTorch's, so a PyTorch
// state_dict (saved as safetensors) loads directly: for layer l and the reverse direction
//   weight_ih_l{l}[_reverse] (G*H, in),  weight_hh_l{l}[_reverse] (G*H, H),
//   bias_ih_l{l}[_reverse] (G*H),         bias_hh_l{l}[_reverse] (G*H)
// with G = 1 (RNN), 3 (GRU: gates r,z,n), 4 (LSTM: gates i,f,g,o), in = input_size for l = 0
// and H * num_directions above; every one drawn from U(-1/sqrt(H), 1/sqrt(H)).
//
// How it runs (and why it is fast): per layer and direction, the input projection of every
// time step is ONE GEMM, x (T*B, in) W_ih^T. Then one fused step op per time step
// (autograd/ops/recurrent_cells.h) does the recurrent GEMM for all gates and the whole batch
// and the gate math in one kernel. Backpropagation through time is the tape replaying those
// steps in reverse; nothing here needs its own backward.
//
// Padded batches: with `lengths`, row b is frozen once t >= lengths[b] (its state stops
// changing, so the final state is the one after its last element; the reverse direction starts
// at that last element), and y is 0 at padded positions — what PyTorch returns for a
// pack_padded_sequence input after pad_packed_sequence (padded to the full T).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "autograd/generator.h"
#include "autograd/ops/recurrent_cells.h"
#include "nn/module.h"

namespace attn::nn {

enum class RecurrentMode { kRnnTanh, kRnnRelu, kGru, kLstm };

struct RecurrentOptions {
  int64_t input_size = 1;
  int64_t hidden_size = 1;
  int64_t num_layers = 1;
  bool bias = true;
  bool batch_first = false;  // PyTorch's default: x (T,B,C)
  double dropout = 0;        // on the outputs of every layer but the last, in training
  bool bidirectional = false;
};

// The state carried between calls: h (L*D, B, H) and, for an LSTM, c of the same shape.
struct RecurrentState {
  Var h;
  std::optional<Var> c;
  // The same values cut off from the tape (truncated BPTT carries this between chunks).
  RecurrentState detached() const;
};

struct RecurrentOutput {
  Var y;                 // (T,B,D*H), or (B,T,D*H) when batch_first
  RecurrentState state;  // final states (h_n, c_n)
};

class Recurrent : public Module {
 public:
  Recurrent(RecurrentMode mode, const RecurrentOptions& options, Generator& gen);

  // x (T,B,in) or (B,T,in) when batch_first. initial: h0 (and c0 for an LSTM; zeros if absent).
  // lengths: one per batch row in [0, T], or empty when every row has all T steps.
  RecurrentOutput forward(const Var& x,
                          const std::optional<RecurrentState>& initial = std::nullopt,
                          const std::vector<int64_t>& lengths = {});

  RecurrentMode mode() const { return mode_; }
  const RecurrentOptions& options() const { return opt_; }
  int64_t num_directions() const { return opt_.bidirectional ? 2 : 1; }
  int64_t gates() const;  // G: 1, 3 or 4
  int64_t output_size() const { return num_directions() * opt_.hidden_size; }

  // The weights of layer l, direction d (registered as the PyTorch names above).
  struct Weights {
    Var w_ih, w_hh, b_ih, b_hh;  // b_* unset without bias
  };
  const Weights& weights(int64_t layer, int64_t direction) const {
    return weights_[layer * num_directions() + direction];
  }

 private:
  // One direction of one layer over the whole sequence: in (T,B,C) -> (T,B,H) plus final state.
  Var run_direction(const Var& in,
                    int64_t k,
                    bool reverse,
                    Var state,
                    const std::vector<int64_t>& lengths,
                    Var& final_state);
  Var step(const Var& gx,
           int64_t t,
           const Var& state,
           const Weights& w,
           const std::vector<int64_t>& lengths) const;
  Var initial_state(const std::optional<RecurrentState>& initial, int64_t k, int64_t batch) const;

  RecurrentMode mode_;
  RecurrentOptions opt_;
  std::vector<Weights> weights_;  // index layer * D + direction
  Var zero_bias_;                 // stands in for b_ih and b_hh when bias = false
  Generator dropout_gen_;
};

// PyTorch's names for the three layers: nn.RNN (tanh or relu), nn.GRU, nn.LSTM.
class RNN : public Recurrent {
 public:
  RNN(const RecurrentOptions& options,
      Generator& gen,
      RnnNonlinearity nonlinearity = RnnNonlinearity::kTanh);
};
class GRU : public Recurrent {
 public:
  GRU(const RecurrentOptions& options, Generator& gen);
};
class LSTM : public Recurrent {
 public:
  LSTM(const RecurrentOptions& options, Generator& gen);
};

// "rnn_tanh", "rnn_relu", "gru", "lstm" <-> the mode (UsageError on anything else).
RecurrentMode recurrent_mode_from_name(const std::string& name);
const char* recurrent_mode_name(RecurrentMode mode);

}  // namespace attn::nn
