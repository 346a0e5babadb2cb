// A Vision Transformer (ViT, Dosovitskiy et al. 2020): an image cut into P x P patches, each
// patch a "word", read by a stack of pre-norm transformer encoder layers.
//
//   attn::nn::VisionTransformerOptions o;
//   o.image_size = 16; o.patch_size = 4; o.channels = 1; o.num_classes = 5;
//   o.d_model = 32; o.nhead = 4; o.dim_feedforward = 64; o.num_layers = 4;
//   attn::nn::VisionTransformer vit(o, gen);
//   attn::Var logits = vit.forward(images);     // images (B,1,16,16) or (B,16,16) -> (B,5)
//   std::vector<attn::Tensor> a = vit.attention_weights();   // per layer (B,4,17,17)
//
// The computation, N = (H/P)(W/P) patches, token 0 the [CLS] token:
//   patches  p_n = flatten(x[:, :, P r : P (r+1), P c : P (c+1)])   n = r (W/P) + c   (B,N,C P P)
//   tokens   z_0 = [cls; p_1 W^T + b; ...; p_N W^T + b] + pos_embed                   (B,1+N,d)
//   layers   z_l = z_{l-1} + SA(LN(z_{l-1})),  then + FF(LN(.))   (TransformerEncoderLayer,
//            norm_first = true)
//   logits   = head(LN(z_L[:, 0]))                                       (B,num_classes)
// patchify() writes the cut as reshape and permute ops on the tape, so the gradient reaches the
// pixels. A patch is flattened channel first, then row, then column: the order of a Conv2d
// weight (d, C, P, P), so a convolutional patch embedding (kernel = stride = P) reshaped to
// (d, C P P) is the same map.
//
// Without position embeddings (position_embedding = false) the layers see a set of patches: the
// [CLS] output, and so the logits, do not change when the patches are shuffled (self-attention
// and the per-token layers are permutation equivariant, and [CLS] reads them all).
//
// Parameter names (docs/checkpoint-format.md): cls_token (1,1,d), pos_embed (1,1+N,d) (absent
// without position embeddings), patch_embed.{weight (d, C P P), bias (d)},
// layers.N.* (nn.TransformerEncoderLayer's names), norm.{weight,bias}, head.{weight,bias}.
// Init: cls_token and pos_embed N(0, init_std^2) (timm's 0.02), the rest PyTorch's defaults.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "nn/linear.h"
#include "nn/module.h"
#include "nn/module_list.h"
#include "nn/norms.h"
#include "nn/transformer/encoder_layer.h"

namespace attn::nn {

// The encoder options (pre-norm, GELU, no dropout by default: toy images are few and small),
// plus the image geometry and the model's own.
struct VisionTransformerOptions : TransformerLayerOptions {
  VisionTransformerOptions() {
    d_model = 32, nhead = 4, dim_feedforward = 64;
    dropout = 0;
    activation = Activation::kGELU;
    norm_first = true;
    layer_norm_eps = 1e-6;  // as torchvision's and timm's ViT
  }
  int64_t image_size = 16;  // H = W
  int64_t channels = 1;
  int64_t patch_size = 4;  // divides image_size
  int64_t num_layers = 4;
  int64_t num_classes = 5;
  bool position_embedding = true;
  double init_std = 0.02;

  int64_t grid() const { return image_size / patch_size; }  // patches per side
  int64_t num_patches() const { return grid() * grid(); }   // N
  int64_t patch_dim() const { return channels * patch_size * patch_size; }
};

// images (B,C,H,W) -> patches (B, (H/P)(W/P), C P P), row-major over the patch grid, each patch
// flattened (channel, row, column). Only reshape and permute: differentiable, no new op.
Var patchify(const Var& images, int64_t patch_size);

class VisionTransformer : public Module {
 public:
  VisionTransformer(const VisionTransformerOptions& options,
                    Generator& gen,
                    std::shared_ptr<Generator> dropout_gen = nullptr);

  // images (B,C,H,W), or (B,H,W) when channels == 1 -> logits (B,num_classes).
  Var forward(const Var& images);
  // The token states after the final norm: (B,1+N,d), token 0 the [CLS] token.
  Var encode(const Var& images);
  // The attention weights of the last forward/encode call, one (B,H,1+N,1+N) per layer (query
  // token, key token; token 0 is [CLS], token 1 + n is patch n).
  std::vector<Tensor> attention_weights() const;

  const VisionTransformerOptions& options() const { return opt_; }

  Var cls_token;  // (1,1,d)
  Var pos_embed;  // (1,1+N,d); not registered (and not used) without position embeddings
  std::shared_ptr<Linear> patch_embed;
  std::shared_ptr<ModuleList<TransformerEncoderLayer>> layers;
  std::shared_ptr<LayerNorm> norm;
  std::shared_ptr<Linear> head;

 private:
  VisionTransformerOptions opt_;
  std::shared_ptr<Generator> dropout_gen_;
};

}  // namespace attn::nn
