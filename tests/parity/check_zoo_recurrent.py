"""PyTorch parity for attention-zoo's recurrent variants: lightning attention and the Titans
memory-as-context layer (nn/attention/lightning_attention.h, nn/attention/titans_memory.h).

Neither exists in PyTorch, so each reference is written here from its definition, with attnlab's
parameter names. Lightning attention's reference is the quadratic masked form of causal linear
attention (no blocks at all: the blocked schedule must give the same function). The Titans
reference takes the memory's inner gradient from torch.autograd.grad(create_graph=True) instead
of the closed form attnlab uses, so the closed form is checked too, and the outer gradients flow
through the inner ones. The exchange is check_layers.py's (Runner).

    /usr/bin/python3 tests/parity/check_zoo_recurrent.py BUILD_DIR DUMP_DIR
Prints `OK <layer/config> <group> maxdiff=...` per tensor group; exits 1 on any failure.
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_layers import SINGLE, Runner, seeded  # noqa: E402
from check_variants import ProjectedRef, merge, softmax_attention, split  # noqa: E402


class LightningRef(ProjectedRef):
    """y_t = sum_{s<=t} phi(q_t).phi(k_s) v_s / (sum_{s<=t} phi(q_t).phi(k_s) + eps), phi = elu+1."""

    def __init__(self, d, h, bias=True, eps=1e-6):
        super().__init__(d, h, bias)
        self.eps = eps

    def kernel(self, q, k, v):
        a = ((F.elu(q) + 1) @ (F.elu(k) + 1).mT).tril()
        return (a @ v) / (a.sum(-1, keepdim=True) + self.eps)


def l2n(x, eps=1e-6):
    return x / (x.pow(2).sum(-1, keepdim=True) + eps).sqrt()


class TitansRef(ProjectedRef):
    def __init__(self, d, h, segment, persistent, bias=True):
        super().__init__(d, h, bias)
        self.segment, self.persistent = segment, persistent
        self.mem_q = nn.Linear(d, d, bias=False)
        self.mem_k = nn.Linear(d, d, bias=False)
        self.mem_v = nn.Linear(d, d, bias=False)
        # Away from attnlab's defaults (M0 = 0, logits 0, 0, -3) so every path carries signal.
        self.memory_init = nn.Parameter(0.3 * torch.randn(d, d))
        if persistent:
            self.persistent_tokens = nn.Parameter(torch.randn(persistent, d))
        self.eta_logit = nn.Parameter(torch.tensor([0.4]))
        self.theta_logit = nn.Parameter(torch.tensor([-0.2]))
        self.alpha_logit = nn.Parameter(torch.tensor([-1.5]))

    def forward(self, x):
        b, t, d = x.shape
        p = self.persistent
        eta, theta, alpha = (torch.sigmoid(g) for g in
                             (self.eta_logit, self.theta_logit, self.alpha_logit))
        m = self.memory_init.expand(b, d, d)
        s = None
        outs = []
        for start in range(0, t, self.segment):
            xs = x[:, start:start + self.segment]
            n = xs.shape[1]
            h = l2n(self.mem_q(xs)) @ m
            parts = ([self.persistent_tokens.expand(b, p, d)] if p else []) + [h, xs]
            ctx = torch.cat(parts, 1)
            q, k, v = (split(proj(ctx), self.h) for proj in (self.q_proj, self.k_proj, self.v_proj))
            tri = torch.ones(n, n, dtype=torch.bool).triu(1)
            hidden = torch.cat([torch.zeros(n, p, dtype=torch.bool), tri, tri], 1)
            outs.append(self.out_proj(merge(softmax_attention(q[:, :, p + n:], k, v, hidden))))
            if start + n < t:
                kk, vv = l2n(self.mem_k(xs)), self.mem_v(xs)
                loss = ((kk @ m - vv) ** 2).sum() / n  # summed over the batch: per-row gradients
                g, = torch.autograd.grad(loss, m, create_graph=True)
                s = -theta * g if s is None else eta * s - theta * g
                m = (1 - alpha) * m + s
        return torch.cat(outs, 1)


def cases(run):
    B, D, H = 2, 8, 2
    fwd = lambda mod, i: mod(i["x"])  # noqa: E731
    # T = 13 in blocks of 4 (4+4+4+1), blocks of 1 (the recurrence), one block.
    for t, block, bias in ((13, 4, True), (7, 1, False), (7, 64, True)):
        seeded(21)
        cfg = {"d_model": D, "nhead": H, "block_size": block, "bias": str(bias).lower()}
        run.check(f"lightning_attention/T={t},block={block},bias={bias}", "lightning_attention",
                  cfg, LightningRef(D, H, bias), {"x": torch.randn(B, t, D)}, fwd, SINGLE)
    # Segments that divide T or not, with and without persistent tokens.
    for t, segment, persistent in ((11, 4, 2), (9, 3, 0), (6, 8, 1)):
        seeded(22)
        cfg = {"d_model": D, "nhead": H, "segment": segment, "persistent": persistent}
        run.check(f"titans_mac/T={t},segment={segment},persistent={persistent}", "titans_mac",
                  cfg, TitansRef(D, H, segment, persistent), {"x": torch.randn(B, t, D)}, fwd,
                  SINGLE)


def main():
    if len(sys.argv) != 3:
        print("usage: check_zoo_recurrent.py BUILD_DIR DUMP_DIR")
        return 2
    run = Runner(sys.argv[1], sys.argv[2])
    if not os.path.exists(run.exe):
        print(f"FAIL check_zoo_recurrent: no executable {run.exe} (build the attnlab target)")
        return 1
    torch.set_num_threads(1)
    cases(run)
    print(f"check_zoo_recurrent: {run.count} cases, {run.failed} failure(s)")
    return 1 if run.failed else 0


if __name__ == "__main__":
    sys.exit(main())
