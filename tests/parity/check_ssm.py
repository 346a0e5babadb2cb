"""PyTorch parity for the S6 selective state-space layer, the selective_ssm layer row.

PyTorch has no Mamba block, so the reference below writes it out from its definition with
Mamba's parameter names (mamba_simple.py): in_proj, a depthwise causal nn.Conv1d, x_proj splitting
into (dt, B, C), dt_proj + softplus for the step size, A = -exp(A_log), the skip D and the gate
SiLU(z), and the scan as a plain Python loop over time steps:
    h = exp(delta_t A) * h + (delta_t u_t) B_t,   y_t = C_t . h + D u_t.
It shares nothing with attnlab's two scans (the sequential tape scan and the chunked fused op);
both are checked through the layer's scan= config key. The exchange is check_layers.py's
(safetensors in and out, `attnlab parity selective_ssm`).

    /usr/bin/python3 tests/parity/check_ssm.py BUILD_DIR DUMP_DIR
Prints `OK <layer/config> <group> maxdiff=...` per tensor group; exits 1 on any failure.
"""
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_layers import SINGLE, Runner, seeded  # noqa: E402


class SelectiveSSMRef(nn.Module):
    def __init__(self, d_model, d_state=4, d_conv=4, expand=2, dt_rank=0):
        super().__init__()
        e, n = expand * d_model, d_state
        self.r = dt_rank or math.ceil(d_model / 16)
        self.n = n
        self.in_proj = nn.Linear(d_model, 2 * e, bias=False)
        self.conv1d = nn.Conv1d(e, e, d_conv, groups=e, padding=d_conv - 1, bias=True)
        self.x_proj = nn.Linear(e, self.r + 2 * n, bias=False)
        self.dt_proj = nn.Linear(self.r, e, bias=True)
        # S4D-real A = -(n+1) and D = 1, moved off their initial values so that a gradient
        # which ignored the parameter would show; step sizes around softplus(0.5) ~ 1 so the
        # state decays within the sequence.
        a_log = torch.log(torch.arange(1, n + 1, dtype=torch.float32)).repeat(e, 1)
        self.A_log = nn.Parameter(a_log + 0.1 * torch.randn(e, n))
        self.D = nn.Parameter(1 + 0.1 * torch.randn(e))
        with torch.no_grad():
            self.dt_proj.bias.copy_(0.5 + 0.3 * torch.randn(e))
        self.out_proj = nn.Linear(e, d_model, bias=False)

    def forward(self, x):
        b_size, t_len, _ = x.shape
        xs, z = self.in_proj(x).chunk(2, dim=-1)
        u = F.silu(self.conv1d(xs.transpose(1, 2))[..., :t_len].transpose(1, 2))
        dt, bm, cm = self.x_proj(u).split([self.r, self.n, self.n], dim=-1)
        delta = F.softplus(self.dt_proj(dt))
        a = -torch.exp(self.A_log)
        h = torch.zeros(b_size, u.shape[-1], self.n)
        ys = []
        for t in range(t_len):
            decay = torch.exp(delta[:, t, :, None] * a)
            h = decay * h + (delta[:, t] * u[:, t])[:, :, None] * bm[:, t, None, :]
            ys.append((h * cm[:, t, None, :]).sum(-1))
        y = torch.stack(ys, dim=1) + u * self.D
        return self.out_proj(y * F.silu(z))


def cases(run):
    fwd = lambda m, i: m(i["x"])  # noqa: E731
    for scan in ("sequential", "chunked"):
        seeded(61)
        run.check(f"selective_ssm/{scan}", "selective_ssm",
                  {"d_model": 8, "d_state": 4, "scan": scan, "chunk": 4},
                  SelectiveSSMRef(8, 4), {"x": torch.randn(2, 9, 8)}, fwd, SINGLE)
    seeded(62)
    run.check("selective_ssm/chunked_long", "selective_ssm",
              {"d_model": 8, "d_state": 8, "scan": "chunked", "chunk": 16},
              SelectiveSSMRef(8, 8), {"x": torch.randn(2, 70, 8)}, fwd, SINGLE)
    seeded(63)
    run.check("selective_ssm/conv3_expand1_rank3", "selective_ssm",
              {"d_model": 6, "d_state": 5, "d_conv": 3, "expand": 1, "dt_rank": 3},
              SelectiveSSMRef(6, 5, d_conv=3, expand=1, dt_rank=3), {"x": torch.randn(3, 7, 6)},
              fwd, SINGLE)


def main():
    if len(sys.argv) != 3:
        print("usage: check_ssm.py BUILD_DIR DUMP_DIR")
        return 2
    run = Runner(sys.argv[1], sys.argv[2])
    if not os.path.exists(run.exe):
        print(f"FAIL check_ssm: no executable {run.exe} (build the attnlab target)")
        return 1
    torch.set_num_threads(1)
    cases(run)
    print(f"check_ssm: {run.count} cases, {run.failed} failure(s)")
    return 1 if run.failed else 0


if __name__ == "__main__":
    sys.exit(main())
