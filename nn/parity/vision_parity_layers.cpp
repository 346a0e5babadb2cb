// Layer-table row for the Vision Transformer (nn/vision/vision_transformer.h). PyTorch 1.13 has
// no ViT of this exact shape, so tests/parity/check_vision.py writes a short reference out of
// nn.Linear, nn.TransformerEncoderLayer (norm_first, batch_first) and nn.LayerNorm with the
// same parameter names.
//
//   vit  input x (B,C,H,W) images -> logits (B,num_classes); grad.x reaches every pixel through
//        the patch cut (reshape + permute on the tape)
#include <memory>

#include "nn/parity/table_helpers.h"
#include "nn/vision/vision_transformer.h"

namespace attn::nn {

namespace {

VisionTransformerOptions read_vit_options(LayerConfig& c) {
  VisionTransformerOptions o;
  o.image_size = c.get_int("image_size", o.image_size);
  o.channels = c.get_int("channels", o.channels);
  o.patch_size = c.get_int("patch_size", o.patch_size);
  o.d_model = c.get_int("d_model", o.d_model);
  o.nhead = c.get_int("nhead", o.nhead);
  o.dim_feedforward = c.get_int("dim_feedforward", o.dim_feedforward);
  o.num_layers = c.get_int("num_layers", o.num_layers);
  o.num_classes = c.get_int("num_classes", o.num_classes);
  o.activation =
      activation_from_name(c.get_choice("activation", "gelu", {"relu", "gelu", "gelu_tanh"}));
  o.layer_norm_eps = c.get_double("layer_norm_eps", o.layer_norm_eps);
  o.position_embedding = c.get_bool("position_embedding", o.position_embedding);
  return o;
}

ParityLayerSpec vit_spec() {
  ParityLayerSpec s;
  s.name = "vit";
  s.summary =
      "VisionTransformer: image_size=16 channels=1 patch_size=4 d_model=32 nhead=4 "
      "dim_feedforward=64 num_layers=4 num_classes=5 activation=gelu layer_norm_eps=1e-6 "
      "position_embedding=true; input x (B,C,H,W)";
  s.build = [](LayerConfig& c, Generator& gen) {
    auto m = std::make_shared<VisionTransformer>(read_vit_options(c), gen);
    ParityLayer layer;
    layer.module = m;
    layer.forward = [m](LayerInputs& in) { return m->forward(in.input("x")); };
    return layer;
  };
  // Tiny images: 2 channels so that the channel axis of the patch cut is exercised; without
  // positions; and one channel cut into odd 3x3 patches with a single head.
  const ConfigMap tiny = {{"image_size", "4"}, {"channels", "2"},   {"patch_size", "2"},
                          {"d_model", "4"},    {"nhead", "2"},      {"dim_feedforward", "6"},
                          {"num_layers", "2"}, {"num_classes", "3"}};
  ConfigMap no_pos = tiny;
  no_pos["position_embedding"] = "false";
  s.gradcheck_configs = {{"tiny", tiny},
                         {"no_positions", no_pos},
                         {"gray_patch3",
                          {{"image_size", "6"},
                           {"patch_size", "3"},
                           {"d_model", "4"},
                           {"nhead", "1"},
                           {"dim_feedforward", "4"},
                           {"num_layers", "1"},
                           {"num_classes", "2"},
                           {"activation", "relu"}}}};
  s.make_inputs = [](LayerConfig& c, Generator& gen) {
    const int64_t size = c.get_int("image_size", 16);
    return TensorMap{{"x", Tensor::randn({2, c.get_int("channels", 1), size, size}, gen)}};
  };
  return s;
}

}  // namespace

std::vector<ParityLayerSpec> vision_parity_layers() {
  return {vit_spec()};
}

}  // namespace attn::nn
