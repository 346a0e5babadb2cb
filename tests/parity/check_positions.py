"""PyTorch parity for T5's learned relative position bias (nn/positional/t5_bias.h).

PyTorch has no T5 module of its own, so the reference below writes the bucket function
(Hugging Face's _relative_position_bucket semantics: bidirectional or causal buckets, exact
below num_buckets/2 per direction, log-spaced up to max_distance, then capped) and the biased
attention softmax(q k^T / sqrt(D) + bias) v out in PyTorch. Compared, in float32 on both sides:
the output, grad.q/k/v, grad.weight (the (num_buckets, nhead) table), and the whole (300, 300)
bucket table of the layer (relative positions -299..299) as an extra output.

    /usr/bin/python3 tests/parity/check_positions.py BUILD_DIR DUMP_DIR
Prints `OK <case> <group> maxdiff=...` per tensor group; exits 1 on any failure.
"""
import math
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_layers import SINGLE, Runner, seeded  # noqa: E402


def relative_bucket(rel, bidirectional, num_buckets, max_distance):
    """rel = key position - query position (long tensor) -> bucket ids (long)."""
    out = torch.zeros_like(rel)
    if bidirectional:
        num_buckets //= 2
        out += (rel > 0).long() * num_buckets
        n = rel.abs()
    else:
        n = (-rel).clamp(min=0)
    exact = num_buckets // 2
    spread = (torch.log(n.float() / exact) / math.log(max_distance / exact)
              * (num_buckets - exact)).long()
    far = (exact + spread).clamp(max=num_buckets - 1)
    return out + torch.where(n < exact, n, far)


class T5BiasAttentionRef(nn.Module):
    def __init__(self, nhead, bidirectional, num_buckets, max_distance, causal):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(num_buckets, nhead))
        self.args = (bidirectional, num_buckets, max_distance)
        self.causal = causal

    def table(self, tq, tk):  # queries are the last tq of tk positions
        i = torch.arange(tq)[:, None] + (tk - tq)
        j = torch.arange(tk)[None, :]
        return relative_bucket(j - i, *self.args)

    def forward(self, q, k, v):
        tq, tk = q.shape[2], k.shape[2]
        bias = self.weight[self.table(tq, tk)].permute(2, 0, 1)[None]  # (1,H,Tq,Tk)
        s = q @ k.mT / math.sqrt(q.shape[-1]) + bias
        if self.causal:
            hidden = torch.ones(tq, tk, dtype=torch.bool).triu(1 + tk - tq)
            s = s.masked_fill(hidden, float("-inf"))
        y = torch.softmax(s, -1) @ v
        return y, {"buckets": self.table(300, 300).float()}


def cases(run):
    B, H, D = 2, 4, 8
    # (bidirectional, num_buckets, max_distance, causal, Tq, Tk): T5's encoder and decoder sizes,
    # a decoding step (Tq < Tk), and small tables whose log buckets start early.
    for bidir, nb, md, causal, tq, tk in ((True, 32, 128, False, 9, 9),
                                          (False, 32, 128, True, 9, 9),
                                          (False, 32, 128, True, 3, 11),
                                          (True, 8, 6, False, 7, 7),
                                          (False, 4, 4, True, 6, 6),
                                          (True, 16, 20, True, 12, 12)):
        seeded(21)
        ref = T5BiasAttentionRef(H, bidir, nb, md, causal)
        inputs = {"q": torch.randn(B, H, tq, D), "k": torch.randn(B, H, tk, D),
                  "v": torch.randn(B, H, tk, D)}
        cfg = {"nhead": H, "bidirectional": str(bidir).lower(), "num_buckets": nb,
               "max_distance": md, "causal": str(causal).lower()}
        run.check(f"t5_bias_attention/bidir={bidir},buckets={nb},max={md},causal={causal},"
                  f"Tq={tq},Tk={tk}", "t5_bias_attention", cfg, ref, inputs,
                  lambda m, i: m(i["q"], i["k"], i["v"]), SINGLE)


def main():
    if len(sys.argv) != 3:
        print("usage: check_positions.py BUILD_DIR DUMP_DIR")
        return 2
    run = Runner(sys.argv[1], sys.argv[2])
    if not os.path.exists(run.exe):
        print(f"FAIL check_positions: no executable {run.exe} (build the attnlab target)")
        return 1
    torch.set_num_threads(1)
    cases(run)
    print(f"check_positions: {run.count} cases, {run.failed} failure(s)")
    return 1 if run.failed else 0


if __name__ == "__main__":
    sys.exit(main())
