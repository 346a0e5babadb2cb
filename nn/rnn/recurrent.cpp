#include "nn/rnn/recurrent.h"

#include <fmt/format.h>

#include <cmath>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "nn/init.h"

namespace attn::nn {

namespace {

const char* type_name_of(RecurrentMode mode) {
  switch (mode) {
    case RecurrentMode::kGru:
      return "GRU";
    case RecurrentMode::kLstm:
      return "LSTM";
    default:
      return "RNN";
  }
}

}  // namespace

RecurrentState RecurrentState::detached() const {
  RecurrentState s{h.detach(), std::nullopt};
  if (c) s.c = c->detach();
  return s;
}

RecurrentMode recurrent_mode_from_name(const std::string& name) {
  if (name == "rnn_tanh" || name == "rnn") return RecurrentMode::kRnnTanh;
  if (name == "rnn_relu") return RecurrentMode::kRnnRelu;
  if (name == "gru") return RecurrentMode::kGru;
  if (name == "lstm") return RecurrentMode::kLstm;
  throw UsageError(
      fmt::format("unknown recurrent cell '{}' (rnn_tanh, rnn_relu, gru, lstm)", name));
}

const char* recurrent_mode_name(RecurrentMode mode) {
  switch (mode) {
    case RecurrentMode::kRnnTanh:
      return "rnn_tanh";
    case RecurrentMode::kRnnRelu:
      return "rnn_relu";
    case RecurrentMode::kGru:
      return "gru";
    case RecurrentMode::kLstm:
      return "lstm";
  }
  return "?";
}

int64_t Recurrent::gates() const {
  return mode_ == RecurrentMode::kLstm ? 4 : mode_ == RecurrentMode::kGru ? 3 : 1;
}

Recurrent::Recurrent(RecurrentMode mode, const RecurrentOptions& options, Generator& gen)
    : Module(type_name_of(mode)), mode_(mode), opt_(options), dropout_gen_(gen.next_u64()) {
  const int64_t h = opt_.hidden_size;
  if (opt_.input_size <= 0 || h <= 0 || opt_.num_layers <= 0)
    throw Error(
        fmt::format("{}: input_size, hidden_size and num_layers must be positive, got {}, "
                    "{}, {}",
                    type_name(), opt_.input_size, h, opt_.num_layers));
  if (opt_.dropout < 0 || opt_.dropout >= 1)
    throw Error(fmt::format("{}: dropout must be in [0, 1), got {}", type_name(), opt_.dropout));
  // PyTorch's reset_parameters: every parameter ~ U(-1/sqrt(H), 1/sqrt(H)), in registration
  // order (per layer, per direction: weight_ih, weight_hh, bias_ih, bias_hh).
  const double bound = 1.0 / std::sqrt(static_cast<double>(h));
  auto param = [&](const std::string& name, const Shape& shape) {
    Tensor t = Tensor::empty(shape);
    init::uniform_(t, gen, -bound, bound);
    return register_parameter(name, t);
  };
  const int64_t width = gates() * h;
  for (int64_t l = 0; l < opt_.num_layers; ++l) {
    for (int64_t d = 0; d < num_directions(); ++d) {
      const std::string suffix = fmt::format("_l{}{}", l, d == 1 ? "_reverse" : "");
      const int64_t in = l == 0 ? opt_.input_size : output_size();
      Weights w;
      w.w_ih = param("weight_ih" + suffix, {width, in});
      w.w_hh = param("weight_hh" + suffix, {width, h});
      if (opt_.bias) {
        w.b_ih = param("bias_ih" + suffix, {width});
        w.b_hh = param("bias_hh" + suffix, {width});
      }
      weights_.push_back(w);
    }
  }
  zero_bias_ = Var::constant(Tensor::zeros({width}));
}

Var Recurrent::step(const Var& gx,
                    int64_t t,
                    const Var& state,
                    const Weights& w,
                    const std::vector<int64_t>& lengths) const {
  const Var& b_ih = opt_.bias ? w.b_ih : zero_bias_;
  const Var& b_hh = opt_.bias ? w.b_hh : zero_bias_;
  switch (mode_) {
    case RecurrentMode::kLstm:
      return lstm_cell(gx, t, state, w.w_hh, b_ih, b_hh, lengths);
    case RecurrentMode::kGru:
      return gru_cell(gx, t, state, w.w_hh, b_ih, b_hh, lengths);
    case RecurrentMode::kRnnRelu:
      return rnn_cell(gx, t, state, w.w_hh, b_ih, b_hh, RnnNonlinearity::kRelu, lengths);
    case RecurrentMode::kRnnTanh:
      break;
  }
  return rnn_cell(gx, t, state, w.w_hh, b_ih, b_hh, RnnNonlinearity::kTanh, lengths);
}

// The starting state of layer-direction k: (B,H), or (2,B,H) = [h; c] for an LSTM.
Var Recurrent::initial_state(const std::optional<RecurrentState>& initial,
                             int64_t k,
                             int64_t batch) const {
  const int64_t h = opt_.hidden_size;
  const bool lstm = mode_ == RecurrentMode::kLstm;
  if (!initial) return Var::constant(Tensor::zeros(lstm ? Shape{2, batch, h} : Shape{batch, h}));
  const Shape want{opt_.num_layers * num_directions(), batch, h};
  auto pick = [&](const Var& s, const char* what) {
    if (s.shape() != want)
      throw Error(
          fmt::format("{}: initial {} must be (num_layers*num_directions, B, H) = {}, got {}",
                      type_name(), what, shape_str(want), shape_str(s.shape())));
    return slice(s, 0, k, k + 1);  // (1,B,H)
  };
  if (!lstm) return reshape(pick(initial->h, "h"), {batch, h});
  const Var c = initial->c ? pick(*initial->c, "c") : Var::constant(Tensor::zeros({1, batch, h}));
  return concat({pick(initial->h, "h"), c}, 0);
}

Var Recurrent::run_direction(const Var& in,
                             int64_t k,
                             bool reverse,
                             Var state,
                             const std::vector<int64_t>& lengths,
                             Var& final_state) {
  const Weights& w = weights_[k];
  const int64_t steps = in.size(0);
  // Every step's input projection at once: (T,B,C) (G*H,C)^T -> (T,B,G*H), one GEMM. (The
  // step adds b_ih itself, which spares a broadcast add over the whole sequence.)
  const Var gx = matmul(in, w.w_ih, false, true);
  const bool lstm = mode_ == RecurrentMode::kLstm;
  std::vector<Var> hs(steps);
  for (int64_t i = 0; i < steps; ++i) {
    const int64_t t = reverse ? steps - 1 - i : i;
    state = step(gx, t, state, w, lengths);
    hs[t] = lstm ? slice(state, 0, 0, 1) : state;  // h_t: (1,B,H) of [h; c], or (B,H)
  }
  final_state = state;
  return lstm ? concat(hs, 0) : stack(hs, 0);  // (T,B,H)
}

RecurrentOutput Recurrent::forward(const Var& x,
                                   const std::optional<RecurrentState>& initial,
                                   const std::vector<int64_t>& lengths) {
  const int64_t c_in = opt_.input_size, h = opt_.hidden_size;
  if (x.rank() != 3 || x.size(2) != c_in)
    throw Error(fmt::format("{}: expected x {} with {} features, got {}", type_name(),
                            opt_.batch_first ? "(B,T,C)" : "(T,B,C)", c_in, shape_str(x.shape())));
  if (initial && initial->c && mode_ != RecurrentMode::kLstm)
    throw Error(fmt::format("{}: only an LSTM has a cell state c", type_name()));
  Var in = opt_.batch_first ? permute(x, {1, 0, 2}) : x;  // time-major (T,B,C) inside
  const int64_t steps = in.size(0), batch = in.size(1);
  if (!lengths.empty()) {
    if (static_cast<int64_t>(lengths.size()) != batch)
      throw Error(
          fmt::format("{}: {} lengths for a batch of {}", type_name(), lengths.size(), batch));
    for (int64_t len : lengths)
      if (len < 0 || len > steps)
        throw Error(
            fmt::format("{}: sequence length {} outside [0, T={}]", type_name(), len, steps));
  }
  const bool lstm = mode_ == RecurrentMode::kLstm;
  std::vector<Var> h_n, c_n;
  for (int64_t l = 0; l < opt_.num_layers; ++l) {
    if (l > 0 && opt_.dropout > 0 && is_training())
      in = dropout(in, static_cast<real>(opt_.dropout), dropout_gen_, true);
    std::vector<Var> outs;
    for (int64_t d = 0; d < num_directions(); ++d) {
      const int64_t k = l * num_directions() + d;
      Var final_state;
      outs.push_back(
          run_direction(in, k, d == 1, initial_state(initial, k, batch), lengths, final_state));
      if (lstm) {
        h_n.push_back(slice(final_state, 0, 0, 1));
        c_n.push_back(slice(final_state, 0, 1, 2));
      } else {
        h_n.push_back(reshape(final_state, {1, batch, h}));
      }
    }
    in = outs.size() == 1 ? outs[0] : concat(outs, 2);  // (T,B,D*H)
  }
  Var y = in;
  if (!lengths.empty()) {
    // Zero the padded positions (a frozen row still holds its last state there).
    Tensor keep = Tensor::zeros({steps, batch, 1});
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t t = 0; t < lengths[b]; ++t) keep[t * batch + b] = 1;
    y = mul(y, Var::constant(keep));
  }
  RecurrentOutput out;
  out.y = opt_.batch_first ? permute(y, {1, 0, 2}) : y;
  out.state.h = h_n.size() == 1 ? h_n[0] : concat(h_n, 0);
  if (lstm) out.state.c = c_n.size() == 1 ? c_n[0] : concat(c_n, 0);
  return out;
}

RNN::RNN(const RecurrentOptions& options, Generator& gen, RnnNonlinearity nonlinearity)
    : Recurrent(nonlinearity == RnnNonlinearity::kTanh ? RecurrentMode::kRnnTanh
                                                       : RecurrentMode::kRnnRelu,
                options,
                gen) {}

GRU::GRU(const RecurrentOptions& options, Generator& gen)
    : Recurrent(RecurrentMode::kGru, options, gen) {}

LSTM::LSTM(const RecurrentOptions& options, Generator& gen)
    : Recurrent(RecurrentMode::kLstm, options, gen) {}

}  // namespace attn::nn
