// Layer-table rows for the recurrent layers: rnn, gru, lstm (torch.nn.RNN / GRU / LSTM).
//
//   attnlab parity lstm --config input_size=3 hidden_size=4 num_layers=2 bidirectional=true
//                          output=all --weights W.safetensors --inputs I.safetensors --out
//                          O.safetensors
//
// Inputs: x (B,T,input_size) (batch_first is always true here), optional h0 and c0
// (num_layers*D, B, H) — differentiable, so grad.h0 / grad.c0 are written — and optional
// `lengths` (B) for a padded batch (PyTorch side: pack_padded_sequence, enforce_sorted=False).
// Outputs: y as PyTorch's output[0]; h_n and c_n written beside it. With output=all, y is
// instead the flat concatenation [y, h_n, c_n] (each flattened), so the upstream gradient
// reaches the final states too and every gradient covers all three outputs
// (tests/parity/check_rnn.py uses that).
#include <memory>

#include "autograd/functional.h"
#include "nn/parity/parity_layers.h"
#include "nn/parity/table_helpers.h"
#include "nn/rnn/recurrent.h"

namespace attn::nn {

namespace {

ParityLayerSpec recurrent_spec(const std::string& name, const std::string& twin) {
  ParityLayerSpec s;
  s.name = name;
  s.summary = twin +
              ": input_size=3 hidden_size=4 num_layers=1 bias=true bidirectional=false "
              "dropout=0" +
              (name == "rnn" ? " nonlinearity=tanh" : "") +
              " output=y|all; inputs x (B,T,C), optional h0" + (name == "lstm" ? ", c0" : "") +
              ", lengths";
  s.build = [name](LayerConfig& c, Generator& gen) {
    RecurrentOptions o;
    o.input_size = c.get_int("input_size", 3);
    o.hidden_size = c.get_int("hidden_size", 4);
    o.num_layers = c.get_int("num_layers", 1);
    o.bias = c.get_bool("bias", true);
    o.bidirectional = c.get_bool("bidirectional", false);
    o.dropout = c.get_double("dropout", 0);
    o.batch_first = c.get_bool("batch_first", true);
    if (!o.batch_first) throw UsageError(name + ": parity runs use batch_first=true");
    RecurrentMode mode = recurrent_mode_from_name(name);
    if (name == "rnn")
      mode =
          recurrent_mode_from_name("rnn_" + c.get_choice("nonlinearity", "tanh", {"tanh", "relu"}));
    const bool all = c.get_choice("output", "y", {"y", "all"}) == "all";
    auto m = std::make_shared<Recurrent>(mode, o, gen);
    auto last = std::make_shared<RecurrentState>();
    ParityLayer layer;
    layer.module = m;
    layer.forward = [m, last, all](LayerInputs& in) {
      std::optional<RecurrentState> initial;
      if (in.has("h0")) {
        initial = RecurrentState{in.input("h0"), std::nullopt};
        if (in.has("c0")) initial->c = in.input("c0");
      }
      std::vector<int64_t> lengths;
      if (in.has("lengths")) {
        const Tensor l = in.indices("lengths");
        for (int64_t i = 0; i < l.numel(); ++i) lengths.push_back(static_cast<int64_t>(l[i]));
      }
      RecurrentOutput out = m->forward(in.input("x"), initial, lengths);
      *last = out.state;
      if (!all) return out.y;
      std::vector<Var> parts = {reshape(out.y, {-1}), reshape(out.state.h, {-1})};
      if (out.state.c) parts.push_back(reshape(*out.state.c, {-1}));
      return concat(parts, 0);
    };
    layer.extra_outputs = [last] {
      TensorMap t{{"h_n", last->h.value()}};
      if (last->c) t["c_n"] = last->c->value();
      return t;
    };
    return layer;
  };
  // Gradcheck rows for these layers are made in nn/rnn/rnn_layer_cases.cpp (with and without
  // padding); the inputs here are the unpadded ones.
  s.make_inputs = [name](LayerConfig& c, Generator& gen) {
    const int64_t b = 2, t = 3, h = c.get_int("hidden_size", 4);
    const int64_t states =
        c.get_int("num_layers", 1) * (c.get_bool("bidirectional", false) ? 2 : 1);
    TensorMap in{{"x", Tensor::randn({b, t, c.get_int("input_size", 3)}, gen)},
                 {"h0", Tensor::randn({states, b, h}, gen, 0.5)}};
    if (name == "lstm") in["c0"] = Tensor::randn({states, b, h}, gen, 0.5);
    return in;
  };
  return s;
}

}  // namespace

std::vector<ParityLayerSpec> rnn_parity_layers() {
  return {recurrent_spec("rnn", "nn.RNN"), recurrent_spec("gru", "nn.GRU"),
          recurrent_spec("lstm", "nn.LSTM")};
}

}  // namespace attn::nn
