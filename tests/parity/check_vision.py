"""PyTorch parity for the Vision Transformer (nn/vision/vision_transformer.h).

PyTorch 1.13 has no ViT with these names, so the reference below builds one from PyTorch's own
parts: the patches cut with unfold-free reshapes (channel, row, column inside a patch, patches
row-major), nn.Linear, a [CLS] token and learned positions, nn.TransformerEncoderLayer
(norm_first=True, batch_first=True), nn.LayerNorm and a head on [CLS]. As a second check of the
patch cut the reference also computes the embedding with F.conv2d (kernel = stride = P) from the
same weight reshaped to (d, C, P, P), and asserts that both agree before comparing with attnlab.
Compared in float32 on both sides: the logits, grad.x (every pixel) and every parameter gradient.

    /usr/bin/python3 tests/parity/check_vision.py BUILD_DIR DUMP_DIR
Prints `OK <case> <group> maxdiff=...` per tensor group; exits 1 on any failure.
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_layers import BLOCK, Runner, seeded  # noqa: E402


class VitRef(nn.Module):
    def __init__(self, image, channels, patch, d, nhead, dff, layers, classes, act, positions):
        super().__init__()
        n = (image // patch) ** 2
        self.patch = patch
        self.cls_token = nn.Parameter(0.02 * torch.randn(1, 1, d))
        if positions:
            self.pos_embed = nn.Parameter(0.02 * torch.randn(1, 1 + n, d))
        self.patch_embed = nn.Linear(channels * patch * patch, d)
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(d, nhead, dff, dropout=0.0, activation=act,
                                       layer_norm_eps=1e-6, norm_first=True, batch_first=True)
            for _ in range(layers))
        self.norm = nn.LayerNorm(d, eps=1e-6)
        self.head = nn.Linear(d, classes)

    def patches(self, x):  # (B,C,H,W) -> (B,N,C P P)
        b, c, h, w = x.shape
        p = self.patch
        x = x.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)
        return x.reshape(b, (h // p) * (w // p), c * p * p)

    def forward(self, x):
        tokens = self.patch_embed(self.patches(x))
        # The same map as a convolution with kernel = stride = P.
        d = tokens.shape[-1]
        conv = F.conv2d(x, self.patch_embed.weight.reshape(d, x.shape[1], self.patch, self.patch),
                        self.patch_embed.bias, stride=self.patch).flatten(2).transpose(1, 2)
        assert torch.allclose(conv, tokens, atol=1e-5), "patch cut != convolution"
        z = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), tokens], 1)
        if hasattr(self, "pos_embed"):
            z = z + self.pos_embed
        for layer in self.layers:
            z = layer(z)
        return self.head(self.norm(z)[:, 0])


def cases(run):
    B = 3
    # (image, channels, patch, d_model, nhead, dim_ff, layers, classes, activation, positions)
    for image, ch, p, d, h, ff, nl, k, act, pos in ((16, 1, 4, 16, 4, 32, 2, 7, "gelu", True),
                                                     (12, 3, 3, 8, 2, 16, 2, 4, "relu", True),
                                                     (8, 2, 2, 8, 2, 12, 1, 3, "gelu", False)):
        seeded(31)
        ref = VitRef(image, ch, p, d, h, ff, nl, k, act, pos)
        cfg = {"image_size": image, "channels": ch, "patch_size": p, "d_model": d, "nhead": h,
               "dim_feedforward": ff, "num_layers": nl, "num_classes": k, "activation": act,
               "position_embedding": str(pos).lower()}
        run.check(f"vit/image={image},C={ch},P={p},d={d},heads={h},layers={nl},{act},"
                  f"positions={pos}", "vit", cfg, ref, {"x": torch.randn(B, ch, image, image)},
                  lambda m, i: m(i["x"]), BLOCK)


def main():
    if len(sys.argv) != 3:
        print("usage: check_vision.py BUILD_DIR DUMP_DIR")
        return 2
    run = Runner(sys.argv[1], sys.argv[2])
    if not os.path.exists(run.exe):
        print(f"FAIL check_vision: no executable {run.exe} (build the attnlab target)")
        return 1
    torch.set_num_threads(1)
    cases(run)
    print(f"check_vision: {run.count} cases, {run.failed} failure(s)")
    return 1 if run.failed else 0


if __name__ == "__main__":
    sys.exit(main())
