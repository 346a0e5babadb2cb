#include "nn/vision/vision_transformer.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "nn/dropout.h"
#include "nn/init.h"

namespace attn::nn {

Var patchify(const Var& images, int64_t patch_size) {
  if (images.rank() != 4)
    throw Error("patchify: images must be (B,C,H,W), got " + shape_str(images.shape()));
  const int64_t b = images.size(0), c = images.size(1), h = images.size(2), w = images.size(3);
  const int64_t p = patch_size;
  if (p <= 0 || h % p != 0 || w % p != 0)
    throw Error(
        fmt::format("patchify: patch size {} must divide the image's height and width, "
                    "got images {}",
                    p, shape_str(images.shape())));
  const int64_t gh = h / p, gw = w / p;
  // Tensors have rank <= 4, so the 6-axis cut (B,C,gh,P,gw,P) -> (B,gh,gw,C,P,P) goes in two
  // steps. Step 1, per (b, c, grid row): the P rows of that strip hold gw patches side by side.
  //   (B C gh, P, gw, P) --permute(0,2,1,3)--> (B C gh, gw, P, P): patch (row, column) blocks.
  Var x = reshape(images, {b * c * gh, p, gw, p});
  x = permute(x, {0, 2, 1, 3});
  // Step 2: the channel axis moves inside each patch.
  //   (B, C, gh gw, P P) --permute(0,2,1,3)--> (B, gh gw, C, P P) -> (B, N, C P P)
  x = reshape(x, {b, c, gh * gw, p * p});
  x = permute(x, {0, 2, 1, 3});
  return reshape(x, {b, gh * gw, c * p * p});
}

VisionTransformer::VisionTransformer(const VisionTransformerOptions& o,
                                     Generator& gen,
                                     std::shared_ptr<Generator> dropout_gen)
    : Module("VisionTransformer"),
      opt_(o),
      dropout_gen_(model_dropout_generator(std::move(dropout_gen), gen)) {
  if (o.image_size <= 0 || o.channels <= 0 || o.patch_size <= 0 || o.num_layers <= 0 ||
      o.num_classes <= 0)
    throw Error(
        "VisionTransformer: image_size, channels, patch_size, num_layers and num_classes must be "
        "positive");
  if (o.image_size % o.patch_size != 0)
    throw Error(fmt::format("VisionTransformer: patch_size {} must divide image_size {}",
                            o.patch_size, o.image_size));
  const int64_t d = o.d_model;
  cls_token = register_parameter("cls_token", Tensor::zeros({1, 1, d}));
  init::normal_(cls_token.value(), gen, 0.0, o.init_std);
  if (o.position_embedding) {
    pos_embed = register_parameter("pos_embed", Tensor::zeros({1, 1 + o.num_patches(), d}));
    init::normal_(pos_embed.value(), gen, 0.0, o.init_std);
  }
  patch_embed =
      register_module("patch_embed", std::make_shared<Linear>(o.patch_dim(), d, true, gen));
  layers = register_module("layers", std::make_shared<ModuleList<TransformerEncoderLayer>>());
  for (int64_t i = 0; i < o.num_layers; ++i)
    layers->append(std::make_shared<TransformerEncoderLayer>(o, gen, dropout_gen_));
  norm = register_module("norm", std::make_shared<LayerNorm>(d, o.layer_norm_eps));
  head = register_module("head", std::make_shared<Linear>(d, o.num_classes, true, gen));
}

Var VisionTransformer::encode(const Var& images) {
  const Var x4 = images.rank() == 3 && opt_.channels == 1
                     ? reshape(images, {images.size(0), 1, images.size(1), images.size(2)})
                     : images;
  const int64_t s = opt_.image_size;
  if (x4.rank() != 4 || x4.size(1) != opt_.channels || x4.size(2) != s || x4.size(3) != s)
    throw Error(fmt::format(
        "VisionTransformer: images must be (B,{},{},{}){}, got {}", opt_.channels, s, s,
        opt_.channels == 1 ? fmt::format(" or (B,{},{})", s, s) : "", shape_str(images.shape())));
  const int64_t b = x4.size(0);
  const Var tokens = patch_embed->forward(patchify(x4, opt_.patch_size));  // (B,N,d)
  // [CLS] for every image: adding (1,1,d) to zeros (B,1,d) broadcasts it, and add's backward
  // sums the B copies' gradients back into the one token.
  const Var cls = add(Var::constant(Tensor::zeros({b, 1, opt_.d_model})), cls_token);
  Var z = concat({cls, tokens}, 1);  // (B,1+N,d)
  if (opt_.position_embedding) z = add(z, pos_embed);
  for (auto& layer : *layers) z = layer->forward(z);
  return norm->forward(z);
}

Var VisionTransformer::forward(const Var& images) {
  const Var z = encode(images);  // (B,1+N,d)
  const Var cls = reshape(slice(z, 1, 0, 1), {z.size(0), opt_.d_model});
  return head->forward(cls);  // (B,num_classes)
}

std::vector<Tensor> VisionTransformer::attention_weights() const {
  std::vector<Tensor> out;
  for (const auto& layer : *layers) out.push_back(layer->self_attn->last_weights());
  return out;
}

}  // namespace attn::nn
