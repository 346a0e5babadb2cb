"""PyTorch parity for attention-zoo's layers: Linformer, Reformer's LSH attention, the dense and
random Synthesizer, and causal RoPE attention with plain or dual-chunk (DCA) position indices.

None exists in PyTorch, so each reference is written out here from its definition, with
attnlab's parameter names. Two are derived differently from attnlab's code on purpose, so that
agreement means something: LSH attention as dense (T,T) attention under the mask "key in the
query's chunk of the sorted order or the one before" (attnlab gathers, chunks and unsorts), and
DCA as one rotation of q_i by the pair's distance D_ij before the dot product with the
unrotated k_j (attnlab rotates q and k by separate position indices and picks among three
score matrices). The exchange is check_layers.py's Runner.

    /usr/bin/python3 tests/parity/check_zoo.py BUILD_DIR DUMP_DIR
Prints `OK <layer/config> <group> maxdiff=...` per tensor group; exits 1 on any failure.
"""
import math
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_layers import SINGLE, Runner, seeded  # noqa: E402
from check_variants import merge, split  # noqa: E402


def later(t):  # True where key j comes after query i
    return torch.ones(t, t, dtype=torch.bool).triu(1)


class LinformerRef(nn.Module):
    def __init__(self, d, h, max_len, k):
        super().__init__()
        self.h = h
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d, d) for _ in range(4))
        self.e_proj = nn.Parameter(torch.randn(k, max_len) / math.sqrt(k))
        self.f_proj = nn.Parameter(torch.randn(k, max_len) / math.sqrt(k))

    def forward(self, x):
        t = x.shape[1]
        q, k, v = (split(p(x), self.h) for p in (self.q_proj, self.k_proj, self.v_proj))
        kc = self.e_proj[:, :t] @ k  # (B,H,k,D): each compressed key mixes every position
        vc = self.f_proj[:, :t] @ v
        w = torch.softmax(q @ kc.mT / math.sqrt(q.shape[-1]), -1)
        return self.out_proj(merge(w @ vc))


class LshRef(nn.Module):
    """Dense form: query i sees key j when j's slot in the bucket-sorted order lies in i's chunk
    or the chunk before; its own score is -1e5; causal hides j > i."""

    def __init__(self, d, h, n_buckets, chunk, causal):
        super().__init__()
        self.h, self.chunk, self.causal = h, chunk, causal
        self.qk_proj, self.v_proj, self.out_proj = (nn.Linear(d, d) for _ in range(3))
        self.register_buffer("rotations", torch.randn(d // h, n_buckets // 2))

    def forward(self, x):
        t = x.shape[1]
        qk, v = split(self.qk_proj(x), self.h), split(self.v_proj(x), self.h)
        with torch.no_grad():
            p = qk @ self.rotations
            bucket = torch.cat([p, -p], -1).argmax(-1)  # (B,H,T)
            order = torch.sort(bucket, dim=-1, stable=True).indices
            slot = torch.argsort(order, -1)  # the inverse permutation
            chunk = slot // self.chunk
            gap = chunk.unsqueeze(-1) - chunk.unsqueeze(-2)  # (B,H,T,T): chunk(i) - chunk(j)
            hidden = (gap != 0) & (gap != 1)
            if self.causal:
                hidden = hidden | later(t)
        k = qk / torch.sqrt((qk * qk).sum(-1, keepdim=True) + 1e-6)
        s = qk @ k.mT / math.sqrt(qk.shape[-1])
        s = s.masked_fill(torch.eye(t, dtype=torch.bool), -1e5)
        s = s.masked_fill(hidden, float("-inf"))
        return self.out_proj(merge(torch.softmax(s, -1) @ v))


class DenseSynthesizerRef(nn.Module):
    def __init__(self, d, h, max_len, causal):
        super().__init__()
        self.h, self.max_len, self.causal = h, max_len, causal
        self.w1, self.w2 = nn.Linear(d, d), nn.Linear(d, h * max_len)
        self.v_proj, self.out_proj = nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, x):
        b, t, _ = x.shape
        s = self.w2(torch.relu(self.w1(x))).reshape(b, t, self.h, self.max_len)
        s = s.transpose(1, 2)[..., :t]
        if self.causal:
            s = s.masked_fill(later(t), float("-inf"))
        return self.out_proj(merge(torch.softmax(s, -1) @ split(self.v_proj(x), self.h)))


class RandomSynthesizerRef(nn.Module):
    def __init__(self, d, h, max_len, causal, trainable):
        super().__init__()
        self.h, self.causal = h, causal
        self.v_proj, self.out_proj = nn.Linear(d, d), nn.Linear(d, d)
        init = torch.randn(h, max_len, max_len)
        if trainable:
            self.scores = nn.Parameter(init)
        else:
            self.register_buffer("scores", init)

    def forward(self, x):
        t = x.shape[1]
        s = self.scores[:, :t, :t]
        if self.causal:
            s = s.masked_fill(later(t), float("-inf"))
        return self.out_proj(merge(torch.softmax(s, -1) @ split(self.v_proj(x), self.h)))


def dca_distance(i, j, train_len, s):
    """The distance DCA assigns to query i and key j <= i (chunk s, training length L)."""
    gap = i // s - j // s
    if gap == 0:
        return i % s - j % s
    if gap == 1:
        return min(s + i % s, train_len - 1) - j % s
    return train_len - 1 - j % s


class RopeAttentionRef(nn.Module):
    """Causal attention with score(i, j) = (R(D_ij) q_i) . k_j / sqrt(Dh), R the rotate-half
    rotation by angle D * 10000^(-2m/Dh) on pair (m, m + Dh/2); D_ij = i - j (plain) or DCA's."""

    def __init__(self, d, h, train_len, chunk, dca):
        super().__init__()
        self.h, self.train_len, self.dca = h, train_len, dca
        self.chunk = chunk if chunk > 0 else train_len // 2
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d, d) for _ in range(4))

    def forward(self, x):
        t = x.shape[1]
        q, k, v = (split(p(x), self.h) for p in (self.q_proj, self.k_proj, self.v_proj))
        dh = q.shape[-1]
        dist = torch.tensor([[float(dca_distance(i, j, self.train_len, self.chunk) if self.dca
                                    else i - j) if j <= i else 0.0 for j in range(t)]
                             for i in range(t)], dtype=torch.float64)
        inv = 10000.0 ** (-2.0 * torch.arange(dh // 2, dtype=torch.float64) / dh)
        ang = (dist.unsqueeze(-1) * inv).float()  # (T,T,Dh/2)
        cos, sin = torch.cos(ang).repeat(1, 1, 2), torch.sin(ang).repeat(1, 1, 2)
        qi = q.unsqueeze(3)  # (B,H,T,1,Dh), one copy per key
        rot = torch.cat([-qi[..., dh // 2:], qi[..., :dh // 2]], -1)
        qr = qi * cos + rot * sin  # (B,H,T,T,Dh): q_i rotated by D_ij
        s = (qr * k.unsqueeze(2)).sum(-1) / math.sqrt(dh)
        s = s.masked_fill(later(t), float("-inf"))
        return self.out_proj(merge(torch.softmax(s, -1) @ v))


def cases(run):
    B, D, H = 2, 8, 2
    x = lambda t: {"x": torch.randn(B, t, D)}  # noqa: E731
    fwd = lambda m, i: m(i["x"])  # noqa: E731
    base = {"d_model": D, "nhead": H}

    seeded(21)
    run.check("linformer_attention/k=3", "linformer_attention", {**base, "max_len": 9, "k": 3},
              LinformerRef(D, H, 9, 3), x(7), fwd, SINGLE)

    for t, chunk, buckets, causal in ((7, 2, 4, False), (9, 3, 6, True), (5, 8, 2, True)):
        seeded(22)
        cfg = {**base, "n_buckets": buckets, "chunk": chunk, "causal": str(causal).lower()}
        run.check(f"lsh_attention/T={t},chunk={chunk},buckets={buckets},causal={causal}",
                  "lsh_attention", cfg, LshRef(D, H, buckets, chunk, causal), x(t), fwd, SINGLE)

    for causal in (False, True):
        seeded(23)
        cfg = {**base, "max_len": 9, "causal": str(causal).lower()}
        run.check(f"dense_synthesizer/causal={causal}", "dense_synthesizer", cfg,
                  DenseSynthesizerRef(D, H, 9, causal), x(7), fwd, SINGLE)
        for trainable in (True, False):
            seeded(24)
            cfg = {**base, "max_len": 9, "causal": str(causal).lower(),
                   "trainable": str(trainable).lower()}
            run.check(f"random_synthesizer/causal={causal},trainable={trainable}",
                      "random_synthesizer", cfg, RandomSynthesizerRef(D, H, 9, causal, trainable),
                      x(7), fwd, SINGLE)

    # T = 11 > train_len = 6: all three DCA relations; chunk 2 caps the successive distances.
    for positions, train_len, chunk in (("plain", 6, 0), ("dual_chunk", 6, 0),
                                        ("dual_chunk", 6, 2)):
        seeded(25)
        cfg = {**base, "train_len": train_len, "chunk": chunk, "positions": positions}
        run.check(f"rope_attention/{positions},L={train_len},chunk={chunk}", "rope_attention", cfg,
                  RopeAttentionRef(D, H, train_len, chunk, positions == "dual_chunk"), x(11), fwd,
                  SINGLE)


def main():
    if len(sys.argv) != 3:
        print("usage: check_zoo.py BUILD_DIR DUMP_DIR")
        return 2
    run = Runner(sys.argv[1], sys.argv[2])
    if not os.path.exists(run.exe):
        print(f"FAIL check_zoo: no executable {run.exe} (build the attnlab target)")
        return 1
    torch.set_num_threads(1)
    cases(run)
    print(f"check_zoo: {run.count} cases, {run.failed} failure(s)")
    return 1 if run.failed else 0


if __name__ == "__main__":
    sys.exit(main())
