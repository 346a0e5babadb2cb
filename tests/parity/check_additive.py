"""PyTorch parity for additive (Bahdanau) multi-head attention, the additive_attention layer.

PyTorch has no additive multi-head attention, so the reference below writes it out from its
definition with attnlab's parameter names (nn.MultiheadAttention's in_proj_weight, in_proj_bias,
out_proj.*, plus additive_v (H,D)): per head, scores s_ij = v_h . tanh(q_i + k_j), then the
masked softmax and the weighted sum of the values, as nn/attention/additive_attention.h. The
exchange is check_layers.py's (safetensors in and out, `attnlab parity additive_attention`).

    /usr/bin/python3 tests/parity/check_additive.py BUILD_DIR DUMP_DIR
Prints `OK <layer/config> <group> maxdiff=...` per tensor group; exits 1 on any failure.
"""
import math
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_layers import SINGLE, Runner, causal, padding, seeded  # noqa: E402


class AdditiveMHARef(nn.Module):
    def __init__(self, e, h, bias=True):
        super().__init__()
        self.h, self.d = h, e // h
        self.in_proj_weight = nn.Parameter(torch.randn(3 * e, e) / math.sqrt(e))
        self.in_proj_bias = nn.Parameter(0.3 * torch.randn(3 * e)) if bias else None
        self.out_proj = nn.Linear(e, e, bias=bias)
        self.additive_v = nn.Parameter(torch.randn(h, self.d) / math.sqrt(self.d))

    def forward(self, x, mem, key_padding_mask=None, attn_mask=None):
        e = x.shape[-1]
        w, b = self.in_proj_weight, self.in_proj_bias
        part = (lambda i: b[i * e:(i + 1) * e]) if b is not None else (lambda i: None)
        split = lambda t: t.unflatten(-1, (self.h, self.d)).transpose(1, 2)  # (B,H,T,D)
        q = split(nn.functional.linear(x, w[:e], part(0)))
        k = split(nn.functional.linear(mem, w[e:2 * e], part(1)))
        v = split(nn.functional.linear(mem, w[2 * e:], part(2)))
        pairs = torch.tanh(q.unsqueeze(3) + k.unsqueeze(2))  # (B,H,Tq,Tk,D)
        s = (pairs * self.additive_v[None, :, None, None, :]).sum(-1)  # (B,H,Tq,Tk)
        hidden = torch.zeros_like(s, dtype=torch.bool)
        if key_padding_mask is not None:
            hidden = hidden | key_padding_mask[:, None, None, :]
        if attn_mask is not None:
            hidden = hidden | attn_mask
        weights = torch.softmax(s.masked_fill(hidden, float("-inf")), -1)
        y = (weights @ v).transpose(1, 2).flatten(2)
        return self.out_proj(y), {"attn_weights": weights}


def cases(run):
    B, T, S, E = 2, 5, 6, 8

    def fwd(m, i):
        return m(i["x"], i.get("memory", i["x"]), i.get("key_padding_mask"), i.get("attn_mask"))

    seeded(41)
    run.check("additive_attention/self", "additive_attention", {"embed_dim": E, "num_heads": 2},
              AdditiveMHARef(E, 2), {"x": torch.randn(B, T, E)}, fwd, SINGLE)
    seeded(42)
    run.check("additive_attention/self_causal_padded_nobias", "additive_attention",
              {"embed_dim": E, "num_heads": 4, "bias": "false"}, AdditiveMHARef(E, 4, False),
              {"x": torch.randn(B, T, E), "attn_mask": causal(T),
               "key_padding_mask": padding([T, T - 2], T)}, fwd, SINGLE)
    seeded(43)
    run.check("additive_attention/cross_padded", "additive_attention",
              {"embed_dim": E, "num_heads": 2}, AdditiveMHARef(E, 2),
              {"x": torch.randn(B, T, E), "memory": torch.randn(B, S, E),
               "key_padding_mask": padding([S - 1, S - 3], S)}, fwd, SINGLE)


def main():
    if len(sys.argv) != 3:
        print("usage: check_additive.py BUILD_DIR DUMP_DIR")
        return 2
    run = Runner(sys.argv[1], sys.argv[2])
    if not os.path.exists(run.exe):
        print(f"FAIL check_additive: no executable {run.exe} (build the attnlab target)")
        return 1
    torch.set_num_threads(1)
    cases(run)
    print(f"check_additive: {run.count} cases, {run.failed} failure(s)")
    return 1 if run.failed else 0


if __name__ == "__main__":
    sys.exit(main())
