"""PyTorch parity for the layers: the real PyTorch module against `attnlab parity`.

For every case: build the PyTorch module under torch.manual_seed, save its state_dict as
safetensors, make inputs (x, memory, masks) and an upstream gradient gy, run
`BUILD_DIR/attnlab parity <layer> --config ... --weights W --inputs I --out O`, and compare y,
grad.<input> and grad.<parameter> for every parameter with PyTorch's, in float32 on both sides:
err = max|ours - torch| / max(1, max|torch|) <= 1e-5 for single layers, 1e-4 for whole blocks.
Dropout is off (eval) on both sides.

    /usr/bin/python3 tests/parity/check_layers.py BUILD_DIR DUMP_DIR
Prints `OK <layer/config> <group> maxdiff=...` per tensor group; exits 1 on any failure.
ATTN_PARITY_BIN overrides the executable (any program taking `parity <layer> ...`).
"""
import math
import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_io  # noqa: E402

SINGLE, BLOCK = 1e-5, 1e-4


# ---- reference modules for layers without a PyTorch twin in this torch version --------------
class RMSNormRef(nn.Module):
    """y = x / sqrt(mean(x^2) + eps) * weight (nn.RMSNorm in torch >= 2.4)."""

    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class FeedForwardRef(nn.Module):
    def __init__(self, d, dff, activation, bias=True):
        super().__init__()
        self.activation = activation
        if activation == "swiglu":
            self.w1 = nn.Linear(d, dff, bias=bias)
            self.w2 = nn.Linear(dff, d, bias=bias)
            self.w3 = nn.Linear(d, dff, bias=bias)
        else:
            self.linear1 = nn.Linear(d, dff, bias=bias)
            self.linear2 = nn.Linear(dff, d, bias=bias)

    def forward(self, x):
        if self.activation == "swiglu":
            return self.w2(F.silu(self.w1(x)) * self.w3(x))
        act = {"relu": F.relu, "gelu": F.gelu,
               "gelu_tanh": lambda t: F.gelu(t, approximate="tanh")}[self.activation]
        return self.linear2(act(self.linear1(x)))


class GroupedQueryRef(nn.Module):
    """GQA/MQA as ordinary multi-head attention whose key/value heads are repeated copies:
    query head h reads key/value head h // (H / Hkv). Parameters carry attnlab's names."""

    def __init__(self, e, h, hkv):
        super().__init__()
        self.e, self.h, self.hkv, self.d = e, h, hkv, e // h
        self.q_proj = nn.Linear(e, e)
        self.k_proj = nn.Linear(e, hkv * self.d)
        self.v_proj = nn.Linear(e, hkv * self.d)
        self.out_proj = nn.Linear(e, e)
        for p in self.parameters():  # no zero biases: every gradient is exercised
            nn.init.normal_(p, std=0.3)

    def repeat(self, t):  # (Hkv*D, ...) -> (H*D, ...), each head's rows repeated g times
        g = self.h // self.hkv
        return t.reshape(self.hkv, self.d, *t.shape[1:]).repeat_interleave(g, 0).reshape(
            self.h * self.d, *t.shape[1:])

    def forward(self, x, mem, **kw):
        w = torch.cat([self.q_proj.weight, self.repeat(self.k_proj.weight),
                       self.repeat(self.v_proj.weight)])
        b = torch.cat([self.q_proj.bias, self.repeat(self.k_proj.bias),
                       self.repeat(self.v_proj.bias)])
        y, weights = F.multi_head_attention_forward(
            x.transpose(0, 1), mem.transpose(0, 1), mem.transpose(0, 1), self.e, self.h, w, b,
            None, None, False, 0.0, self.out_proj.weight, self.out_proj.bias, training=False,
            need_weights=True, average_attn_weights=False, **kw)
        return y.transpose(0, 1), weights


# ---- the runner -----------------------------------------------------------------------------
class Runner:
    def __init__(self, build_dir, dump_dir):
        self.exe = os.environ.get("ATTN_PARITY_BIN", os.path.join(build_dir, "attnlab"))
        self.dir = os.path.join(dump_dir, "layers")
        os.makedirs(self.dir, exist_ok=True)
        self.failed = 0
        self.count = 0

    def fail(self, name, why):
        print(f"FAIL {name}: {why}")
        self.failed += 1

    def check(self, name, layer, config, module, inputs, forward, tol, extra=None):
        """inputs: name -> tensor; float tensors are differentiable inputs, bool are masks,
        int64 are ids. forward(module, inputs) -> y (or (y, extras dict))."""
        self.count += 1
        module.eval()
        stem = os.path.join(self.dir, name.replace("/", "__"))
        safetensors_io.save(stem + ".w.safetensors",
                            {k: v.detach().numpy().astype(np.float32)
                             for k, v in module.state_dict().items()})
        leaves = {k: v.detach().clone().requires_grad_(True)
                  for k, v in inputs.items() if v.dtype == torch.float32}
        env = {k: leaves.get(k, v) for k, v in inputs.items()}
        out = forward(module, env)
        extras = {}
        if isinstance(out, tuple):
            out, extras = out
        gy = torch.randn_like(out)
        out.backward(gy)
        files = {k: v.detach().numpy() for k, v in inputs.items()}
        files["gy"] = gy.numpy()
        safetensors_io.save(stem + ".in.safetensors", files)
        cmd = [self.exe, "parity", layer]
        if config:
            cmd += ["--config"] + [f"{k}={v}" for k, v in config.items()]
        cmd += ["--weights", stem + ".w.safetensors", "--inputs", stem + ".in.safetensors",
                "--out", stem + ".out.safetensors"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            return self.fail(name, f"exit {r.returncode}: {' '.join(cmd)}\n{r.stderr.strip()}")
        ours, _ = safetensors_io.load(stem + ".out.safetensors")
        groups = {"y": [("y", out)]}
        groups["grad.inputs"] = [("grad." + k, v.grad) for k, v in leaves.items()]
        groups["grad.params"] = [("grad." + k, p.grad) for k, p in module.named_parameters()]
        groups["extras"] = list(extras.items())
        for group, pairs in groups.items():
            if not pairs:
                continue
            worst, worst_diff, where = 0.0, 0.0, ""
            for key, ref in pairs:
                ref = np.zeros(1) if ref is None else ref.detach().numpy().astype(np.float64)
                if key not in ours:
                    return self.fail(name, f"attnlab wrote no '{key}'")
                mine = ours[key].astype(np.float64)
                if ref.size == 1 and mine.size > 1 and ref.shape != mine.shape:
                    ref = np.zeros_like(mine)  # PyTorch left the gradient as None
                if mine.shape != ref.shape:
                    return self.fail(name, f"{key}: shape {mine.shape} vs torch {ref.shape}")
                diff = float(np.max(np.abs(mine - ref))) if ref.size else 0.0
                err = diff / max(1.0, float(np.max(np.abs(ref))) if ref.size else 1.0)
                if err >= worst:
                    worst, worst_diff, where = err, diff, key
            status = "OK  " if worst <= tol else "FAIL"
            self.failed += worst > tol
            print(f"{status} {name} {group} maxdiff={worst_diff:.2e} rel={worst:.1e} "
                  f"(worst {where}, tol {tol:g})")


def seeded(seed):
    torch.manual_seed(seed)
    return seed


def padding(lengths, t):
    return torch.tensor([[j >= n for j in range(t)] for n in lengths])


def causal(t):
    return torch.triu(torch.ones(t, t, dtype=torch.bool), 1)


def cases(run):
    B, T, S = 2, 5, 6

    # ---- single layers ----
    for bias in (True, False):
        seeded(1)
        m = nn.Linear(6, 4, bias=bias)
        run.check(f"linear/bias={bias}", "linear",
                  {"in_features": 6, "out_features": 4, "bias": str(bias).lower()}, m,
                  {"x": torch.randn(B, T, 6)}, lambda m, i: m(i["x"]), SINGLE)

    seeded(2)
    m = nn.Embedding(11, 5, padding_idx=0)
    ids = torch.randint(0, 11, (B, T))
    ids[0, -2:] = 0
    run.check("embedding/padding_idx=0", "embedding",
              {"num_embeddings": 11, "embedding_dim": 5, "padding_idx": 0}, m, {"x": ids},
              lambda m, i: m(i["x"]), SINGLE)

    for affine in (True, False):
        seeded(3)
        m = nn.LayerNorm(7, eps=1e-5, elementwise_affine=affine)
        if affine:
            with torch.no_grad():
                m.weight.normal_(1, 0.2)
                m.bias.normal_(0, 0.2)
        run.check(f"layer_norm/affine={affine}", "layer_norm",
                  {"normalized_shape": 7, "elementwise_affine": str(affine).lower()}, m,
                  {"x": 3 * torch.randn(B, T, 7) + 1}, lambda m, i: m(i["x"]), SINGLE)

    seeded(4)
    run.check("rms_norm/eps=1e-6", "rms_norm", {"normalized_shape": 7, "eps": 1e-6},
              RMSNormRef(7), {"x": 2 * torch.randn(B, T, 7)}, lambda m, i: m(i["x"]), SINGLE)

    for act in ("relu", "gelu", "gelu_tanh", "swiglu"):
        seeded(5)
        run.check(f"feedforward/{act}", "feedforward",
                  {"d_model": 8, "dim_feedforward": 12, "activation": act},
                  FeedForwardRef(8, 12, act), {"x": torch.randn(B, T, 8)},
                  lambda m, i: m(i["x"]), SINGLE)

    # ---- attention: nn.MultiheadAttention (batch_first) and GQA/MQA ----
    E, H = 8, 2

    def mha_forward(m, i):
        mem = i.get("memory", i["x"])
        y, w = m(i["x"], mem, mem, key_padding_mask=i.get("key_padding_mask"),
                 attn_mask=i.get("attn_mask"), need_weights=True, average_attn_weights=False)
        return y, {"attn_weights": w}

    def mha(bias=True):
        m = nn.MultiheadAttention(E, H, bias=bias, batch_first=True)
        if bias:
            with torch.no_grad():
                m.in_proj_bias.normal_(0, 0.3)
                m.out_proj.bias.normal_(0, 0.3)
        return m

    seeded(6)
    run.check("mha/self", "mha", {"embed_dim": E, "num_heads": H}, mha(),
              {"x": torch.randn(B, T, E)}, mha_forward, SINGLE)
    seeded(7)
    run.check("mha/self_causal_padded_nobias", "mha",
              {"embed_dim": E, "num_heads": H, "bias": "false"}, mha(False),
              {"x": torch.randn(B, T, E), "attn_mask": causal(T),
               "key_padding_mask": padding([T, T - 2], T)}, mha_forward, SINGLE)
    seeded(8)
    run.check("mha/cross_padded", "mha", {"embed_dim": E, "num_heads": H}, mha(),
              {"x": torch.randn(B, T, E), "memory": torch.randn(B, S, E),
               "key_padding_mask": padding([S - 1, S - 3], S)}, mha_forward, SINGLE)

    def gqa_forward(m, i):
        y, w = m(i["x"], i.get("memory", i["x"]), key_padding_mask=i.get("key_padding_mask"),
                 attn_mask=i.get("attn_mask"))
        return y, {"attn_weights": w}

    for h, hkv in ((4, 2), (4, 1)):
        seeded(9)
        run.check(f"mha/gqa_h{h}_kv{hkv}_vs_repeated_kv", "mha",
                  {"embed_dim": E, "num_heads": h, "n_kv_heads": hkv}, GroupedQueryRef(E, h, hkv),
                  {"x": torch.randn(B, T, E), "attn_mask": causal(T)}, gqa_forward, SINGLE)
    seeded(10)
    run.check("mha/gqa_cross_padded", "mha", {"embed_dim": E, "num_heads": 4, "n_kv_heads": 2},
              GroupedQueryRef(E, 4, 2),
              {"x": torch.randn(B, T, E), "memory": torch.randn(B, S, E),
               "key_padding_mask": padding([S, S - 2], S)}, gqa_forward, SINGLE)

    # ---- blocks: nn.TransformerEncoderLayer / nn.TransformerDecoderLayer ----
    D, FF = 8, 16
    for norm_first in (False, True):
        for act in ("relu", "gelu"):
            for masked in (False, True):
                seeded(11)
                m = nn.TransformerEncoderLayer(D, H, FF, dropout=0.1, activation=act,
                                               norm_first=norm_first, batch_first=True)
                inputs = {"x": torch.randn(B, T, D)}
                if masked:
                    inputs["src_mask"] = causal(T)
                    inputs["src_key_padding_mask"] = padding([T, T - 2], T)
                name = (f"encoder_layer/{'pre' if norm_first else 'post'}_{act}"
                        f"{'_masked' if masked else ''}")
                run.check(name, "encoder_layer",
                          {"d_model": D, "nhead": H, "dim_feedforward": FF, "dropout": 0.1,
                           "activation": act, "norm_first": str(norm_first).lower()}, m, inputs,
                          lambda m, i: m(i["x"], src_mask=i.get("src_mask"),
                                         src_key_padding_mask=i.get("src_key_padding_mask")),
                          BLOCK)

    for norm_first, act in ((False, "relu"), (True, "gelu")):
        seeded(12)
        m = nn.TransformerDecoderLayer(D, H, FF, dropout=0.1, activation=act,
                                       norm_first=norm_first, batch_first=True)
        run.check(f"decoder_layer/{'pre' if norm_first else 'post'}_{act}_masked",
                  "decoder_layer",
                  {"d_model": D, "nhead": H, "dim_feedforward": FF, "activation": act,
                   "norm_first": str(norm_first).lower()}, m,
                  {"x": torch.randn(B, T, D), "memory": torch.randn(B, S, D),
                   "tgt_mask": causal(T), "tgt_key_padding_mask": padding([T, T - 1], T),
                   "memory_key_padding_mask": padding([S - 2, S], S)},
                  lambda m, i: m(i["x"], i["memory"], tgt_mask=i["tgt_mask"],
                                 tgt_key_padding_mask=i["tgt_key_padding_mask"],
                                 memory_key_padding_mask=i["memory_key_padding_mask"]), BLOCK)
    seeded(13)
    m = nn.TransformerDecoderLayer(D, H, FF, activation="relu", batch_first=True)
    run.check("decoder_layer/post_relu_causal_flag", "decoder_layer",
              {"d_model": D, "nhead": H, "dim_feedforward": FF, "causal": "true"}, m,
              {"x": torch.randn(B, T, D), "memory": torch.randn(B, S, D)},
              lambda m, i: m(i["x"], i["memory"], tgt_mask=causal(T)), BLOCK)

    # ---- stacks: nn.Transformer ----
    for norm_first in (False, True):
        seeded(14)
        m = nn.Transformer(D, H, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=FF,
                           activation="gelu" if norm_first else "relu", norm_first=norm_first,
                           batch_first=True)
        run.check(f"transformer/{'pre' if norm_first else 'post'}_2x2", "transformer",
                  {"d_model": D, "nhead": H, "num_encoder_layers": 2, "num_decoder_layers": 2,
                   "dim_feedforward": FF, "activation": "gelu" if norm_first else "relu",
                   "norm_first": str(norm_first).lower()}, m,
                  {"src": torch.randn(B, S, D), "tgt": torch.randn(B, T, D),
                   "tgt_mask": causal(T), "src_key_padding_mask": padding([S, S - 2], S),
                   "memory_key_padding_mask": padding([S, S - 2], S)},
                  lambda m, i: m(i["src"], i["tgt"], tgt_mask=i["tgt_mask"],
                                 src_key_padding_mask=i["src_key_padding_mask"],
                                 memory_key_padding_mask=i["memory_key_padding_mask"]), BLOCK)


def main():
    if len(sys.argv) != 3:
        print("usage: check_layers.py BUILD_DIR DUMP_DIR")
        return 2
    run = Runner(sys.argv[1], sys.argv[2])
    if not os.path.exists(run.exe):
        print(f"FAIL check_layers: no executable {run.exe} (build the attnlab target)")
        return 1
    torch.set_num_threads(1)
    cases(run)
    print(f"check_layers: {run.count} cases, {run.failed} failure(s)")
    return 1 if run.failed else 0


if __name__ == "__main__":
    sys.exit(main())
