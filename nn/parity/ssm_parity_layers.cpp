// Layer-table row for the S6 selective state-space layer (nn/ssm/selective_ssm.h).
//
// Input x (B,T,d_model). Config keys: d_model=8 d_state=4 d_conv=4 expand=2 dt_rank=0 (auto:
// ceil(d_model/16)) scan=auto|sequential|chunked chunk=256; seq_len (gradcheck inputs only).
// PyTorch has no such module: tests/parity/check_ssm.py carries a short transcription of
// Mamba's block with a Python loop over time and the same parameter names.
#include "nn/parity/parity_layers.h"
#include "nn/ssm/selective_ssm.h"

namespace attn::nn {

std::vector<ParityLayerSpec> ssm_parity_layers() {
  std::vector<ParityLayerSpec> rows;
  ParityLayerSpec s6;
  s6.name = "selective_ssm";
  s6.summary =
      "SelectiveSSM (Mamba's S6 block): d_model=8 d_state=4 d_conv=4 expand=2 dt_rank=0 "
      "scan=auto|sequential|chunked chunk=256; input x";
  s6.build = [](LayerConfig& c, Generator& gen) {
    SelectiveSsmOptions o;
    o.d_state = c.get_int("d_state", 4);
    o.d_conv = c.get_int("d_conv", 4);
    o.expand = c.get_int("expand", 2);
    o.dt_rank = c.get_int("dt_rank", 0);
    o.scan = ssm_scan_from_name(c.get_choice("scan", "auto", {"auto", "sequential", "chunked"}));
    o.chunk = c.get_int("chunk", 256);
    auto m = std::make_shared<SelectiveSSM>(c.get_int("d_model", 8), gen, o);
    return ParityLayer{m, [m](LayerInputs& in) { return m->forward(in.input("x")); }};
  };
  // d_model 4 -> E 8 channels, N 3, dt_rank 1; T 5 with chunks of 2 (2 + 2 + 1, chained).
  const ConfigMap small = {{"d_model", "4"}, {"d_state", "3"}, {"chunk", "2"}, {"seq_len", "5"}};
  // `changes`, and `small` for every other key (map::insert keeps a key already there).
  auto with = [&small](ConfigMap changes) {
    changes.insert(small.begin(), small.end());
    return changes;
  };
  s6.gradcheck_configs = {
      // scan=auto: the sequential scan in reference mode, the chunked op on the fast path, so
      // the sweep's two passes (and tests/nn/reference_mode_test.cpp) cover both scans; a
      // forced scan would put the fused op on the reference path.
      {"auto", small},
      {"conv2_rank2", with({{"d_conv", "2"}, {"dt_rank", "2"}, {"expand", "1"}})},
  };
  s6.make_inputs = [](LayerConfig& c, Generator& gen) {
    return TensorMap{
        {"x", Tensor::randn({2, c.get_int("seq_len", 5), c.get_int("d_model", 8)}, gen)}};
  };
  rows.push_back(std::move(s6));
  return rows;
}

}  // namespace attn::nn
