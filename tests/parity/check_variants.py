"""PyTorch parity for the attention variants and the llama block.

None of these layers exists in PyTorch, so each reference below is written out in plain PyTorch
code from its definition (with attnlab's parameter names, docs/checkpoint-format.md). The
exchange is check_layers.py's: state_dict and inputs as safetensors, then
`BUILD_DIR/attnlab parity <layer> --config ... --weights W --inputs I --out O`, and y, grad.x and
every parameter gradient compared in float32 on both sides.

    /usr/bin/python3 tests/parity/check_variants.py BUILD_DIR DUMP_DIR
Prints `OK <layer/config> <group> maxdiff=...` per tensor group; exits 1 on any failure.
"""
import math
import os
import subprocess
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_layers import BLOCK, SINGLE, FeedForwardRef, RMSNormRef, Runner, seeded  # noqa: E402
import safetensors_io  # noqa: E402


def split(x, h):  # (B,T,h*D) -> (B,h,T,D)
    b, t, e = x.shape
    return x.reshape(b, t, h, e // h).transpose(1, 2)


def merge(x):  # (B,h,T,D) -> (B,T,h*D)
    b, h, t, d = x.shape
    return x.transpose(1, 2).reshape(b, t, h * d)


def hidden_above_diagonal(tq, tk):  # True = hidden: key j after query i (queries last)
    return torch.ones(tq, tk, dtype=torch.bool).triu(1 + tk - tq)


def softmax_attention(q, k, v, hidden=None):
    s = q @ k.mT / math.sqrt(q.shape[-1])
    if hidden is not None:
        s = s.masked_fill(hidden, float("-inf"))
    return torch.softmax(s, -1) @ v


class ProjectedRef(nn.Module):
    """q_proj, k_proj, v_proj, out_proj around a kernel on (B,H,T,D) heads."""

    def __init__(self, d, h, bias=True):
        super().__init__()
        self.h = h
        self.q_proj = nn.Linear(d, d, bias=bias)
        self.k_proj = nn.Linear(d, d, bias=bias)
        self.v_proj = nn.Linear(d, d, bias=bias)
        self.out_proj = nn.Linear(d, d, bias=bias)

    def forward(self, x):
        q, k, v = (split(p(x), self.h) for p in (self.q_proj, self.k_proj, self.v_proj))
        return self.out_proj(merge(self.kernel(q, k, v)))


class LinearAttentionRef(ProjectedRef):
    """phi = elu + 1. Non-causal: phi(Q) (phi(K)^T V) / phi(Q) sum_s phi(k_s); causal: the
    quadratic form with the upper triangle zeroed (a different order of the same sums)."""

    def __init__(self, d, h, causal, bias=True, eps=1e-6):
        super().__init__(d, h, bias)
        self.causal, self.eps = causal, eps

    def kernel(self, q, k, v):
        fq, fk = F.elu(q) + 1, F.elu(k) + 1
        if self.causal:
            a = (fq @ fk.mT).tril()
            return (a @ v) / (a.sum(-1, keepdim=True) + self.eps)
        z = fk.sum(-2, keepdim=True)
        return (fq @ (fk.mT @ v)) / (fq @ z.mT + self.eps)


class SoftmaxAttentionRef(ProjectedRef):
    """Plain softmax(q k^T / sqrt(D)) v under a boolean mask (True = hidden): the reference for
    the blockwise kernel (causal or not) and for sliding windows."""

    def __init__(self, d, h, mask_fn, bias=True):
        super().__init__(d, h, bias)
        self.mask_fn = mask_fn

    def kernel(self, q, k, v):
        return softmax_attention(q, k, v, self.mask_fn(q.shape[2]))


def window_hidden(window, causal, global_tokens, links=None):
    """links (T, r): row i also sees key links[i, n] (BigBird's random links; -1 = none)."""
    def make(t):
        i = torch.arange(t)[:, None]
        j = torch.arange(t)[None, :]
        band = (i - j).abs() <= window
        if causal:
            band &= j <= i
        g = torch.zeros(t, dtype=torch.bool)
        g[list(global_tokens)] = True
        via_global = g[:, None] | g[None, :]
        if causal:
            via_global &= j <= i
        linked = torch.zeros(t, t, dtype=torch.bool)
        if links is not None:
            rows, slots = (links >= 0).nonzero(as_tuple=True)
            linked[rows, links[rows, slots].long()] = True
        return ~(band | via_global | linked)
    return make


def dumped_links(run, config, t, d):
    """The random links attnlab's sliding_window layer uses at length t, as it writes them out
    (random_links, (T, r)): one forward on throwaway weights and inputs."""
    stem = os.path.join(run.dir, "sliding_window_links_probe")
    ref = SoftmaxAttentionRef(d, config["nhead"], None)
    safetensors_io.save(stem + ".w.safetensors",
                        {k: v.detach().numpy() for k, v in ref.state_dict().items()})
    safetensors_io.save(stem + ".in.safetensors", {"x": torch.zeros(1, t, d).numpy(),
                                                   "gy": torch.zeros(1, t, d).numpy()})
    cmd = [run.exe, "parity", "sliding_window", "--config"]
    cmd += [f"{k}={v}" for k, v in config.items()]
    cmd += ["--weights", stem + ".w.safetensors", "--inputs", stem + ".in.safetensors",
            "--out", stem + ".out.safetensors"]
    subprocess.run(cmd, check=True, capture_output=True)
    out, _ = safetensors_io.load(stem + ".out.safetensors")
    return torch.from_numpy(out["random_links"])


def rope(x, style, theta, start=0):
    """x (B,H,T,D): pair i of the row at position p rotated by p * theta^(-2i/D)."""
    t, d = x.shape[-2], x.shape[-1]
    ang = (torch.arange(t, dtype=torch.float64) + start)[:, None] * \
        theta ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)[None, :]
    c, s = ang.cos().float(), ang.sin().float()
    if style == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
        return torch.stack([a * c - b * s, b * c + a * s], -1).flatten(-2)
    h = d // 2
    a, b = x[..., :h], x[..., h:]
    return torch.cat([a * c - b * s, b * c + a * s], -1)


class LlamaAttentionRef(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, style, theta):
        super().__init__()
        self.h, self.hkv, self.d = n_heads, n_kv_heads, dim // n_heads
        self.style, self.theta = style, theta
        self.wq = nn.Linear(dim, n_heads * self.d, bias=False)
        self.wk = nn.Linear(dim, n_kv_heads * self.d, bias=False)
        self.wv = nn.Linear(dim, n_kv_heads * self.d, bias=False)
        self.wo = nn.Linear(n_heads * self.d, dim, bias=False)

    def forward(self, x):
        q = rope(split(self.wq(x), self.h), self.style, self.theta)
        k = rope(split(self.wk(x), self.hkv), self.style, self.theta)
        v = split(self.wv(x), self.hkv)
        g = self.h // self.hkv  # query head h reads kv head h // g
        k, v = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)
        t = x.shape[1]
        return self.wo(merge(softmax_attention(q, k, v, hidden_above_diagonal(t, t))))


class LlamaBlockRef(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, hidden, eps, style="interleaved", theta=1e4):
        super().__init__()
        self.attention = LlamaAttentionRef(dim, n_heads, n_kv_heads, style, theta)
        self.feed_forward = FeedForwardRef(dim, hidden, "swiglu", bias=False)
        self.attention_norm = RMSNormRef(dim, eps)
        self.ffn_norm = RMSNormRef(dim, eps)

    def forward(self, x):
        h = x + self.attention(self.attention_norm(x))
        return h + self.feed_forward(self.ffn_norm(h))


def cases(run):
    B, T, D, H = 2, 7, 8, 2
    x = lambda t=T, d=D: {"x": torch.randn(B, t, d)}  # noqa: E731
    fwd = lambda m, i: m(i["x"])  # noqa: E731

    for causal in (False, True):
        for bias in (True, False):
            seeded(11)
            cfg = {"d_model": D, "nhead": H, "causal": str(causal).lower(),
                   "bias": str(bias).lower()}
            run.check(f"linear_attention/causal={causal},bias={bias}", "linear_attention", cfg,
                      LinearAttentionRef(D, H, causal, bias), x(), fwd, SINGLE)

    # Blocks that do not divide T (13 = 4+4+4+1), a single block, and blocks of one row.
    for causal in (False, True):
        for t, block in ((13, 4), (T, 64), (T, 1)):
            seeded(12)
            mask = (lambda n: hidden_above_diagonal(n, n)) if causal else (lambda n: None)
            cfg = {"d_model": D, "nhead": H, "causal": str(causal).lower(), "block_size": block}
            run.check(f"blockwise_attention/causal={causal},T={t},block={block}",
                      "blockwise_attention", cfg, SoftmaxAttentionRef(D, H, mask), x(t), fwd,
                      SINGLE)

    for window, causal, global_first in ((1, False, True), (2, True, False), (2, True, True)):
        seeded(13)
        cfg = {"d_model": D, "nhead": H, "window": window, "causal": str(causal).lower(),
               "global_first": str(global_first).lower()}
        ref = SoftmaxAttentionRef(D, H, window_hidden(window, causal, [0] if global_first else []))
        run.check(f"sliding_window/w={window},causal={causal},global={global_first}",
                  "sliding_window", cfg, ref, x(), fwd, SINGLE)

    # BigBird: the window, global tokens and r random links per row, the mask opened at the
    # (row, key) pairs attnlab dumps; T = 12 leaves room for links outside the band.
    for window, causal, global_first, r in ((1, False, True, 2), (2, True, False, 3)):
        cfg = {"d_model": D, "nhead": H, "window": window, "causal": str(causal).lower(),
               "global_first": str(global_first).lower(), "random_links": r, "random_seed": 7}
        links = dumped_links(run, cfg, 12, D)
        seeded(15)
        ref = SoftmaxAttentionRef(D, H, window_hidden(window, causal,
                                                      [0] if global_first else [], links))
        run.check(f"sliding_window/w={window},causal={causal},global={global_first},random={r}",
                  "sliding_window", cfg, ref, x(12), fwd, SINGLE)

    for dim, nh, nkv, hidden, style, kernel in ((8, 2, 2, 16, "interleaved", "sdpa"),
                                                (16, 4, 2, 24, "interleaved", "sdpa"),
                                                (16, 4, 1, 24, "rotate_half", "blockwise")):
        seeded(14)
        cfg = {"dim": dim, "n_heads": nh, "n_kv_heads": nkv, "hidden_dim": hidden,
               "norm_eps": 1e-5, "rope_style": style, "kernel": kernel, "block_size": 3}
        run.check(f"llama_block/H={nh},Hkv={nkv},{style},{kernel}", "llama_block", cfg,
                  LlamaBlockRef(dim, nh, nkv, hidden, 1e-5, style), x(9, dim), fwd, BLOCK)


def main():
    if len(sys.argv) != 3:
        print("usage: check_variants.py BUILD_DIR DUMP_DIR")
        return 2
    run = Runner(sys.argv[1], sys.argv[2])
    if not os.path.exists(run.exe):
        print(f"FAIL check_variants: no executable {run.exe} (build the attnlab target)")
        return 1
    torch.set_num_threads(1)
    cases(run)
    print(f"check_variants: {run.count} cases, {run.failed} failure(s)")
    return 1 if run.failed else 0


if __name__ == "__main__":
    sys.exit(main())
