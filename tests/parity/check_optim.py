"""PyTorch parity for the optimizers and gradient clipping.

attn_optim_dump ran each optimizer configuration for 5 steps from fixed weights and gradients
(some steps leave a parameter without a gradient, some clip the global norm first, some change
the learning rate between steps). Here torch.optim replays exactly the same steps, and we
compare the weights after every step: max |ours - torch| must be <= 1e-6.

    /usr/bin/python3 tests/parity/check_optim.py BUILD_DIR DUMP_DIR
"""
import glob
import os
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_io  # noqa: E402

TOL = 1e-6
STEPS = 5


def replay(path):
    t, meta = safetensors_io.load(path)
    n_params = len([k for k in t if k.startswith("init.")])
    params = [torch.nn.Parameter(torch.from_numpy(t[f"init.{i}"].astype(np.float32)))
              for i in range(n_params)]
    opt = eval(meta["torch"], {"torch": torch, "params": params})  # noqa: S307 (our own dump)
    lrs = [float(x) for x in meta["lrs"].split(",")]
    clip = float(meta["clip"])
    worst, notes = 0.0, []
    for s in range(STEPS):
        for i, p in enumerate(params):
            key = f"grad.{s}.{i}"
            p.grad = torch.from_numpy(t[key].astype(np.float32)) if key in t else None
        if clip > 0:
            norm = float(torch.nn.utils.clip_grad_norm_(params, clip))
            ours = float(meta[f"clipnorm.{s}"])
            if abs(norm - ours) > 1e-5 * max(1.0, norm):
                notes.append(f"step {s}: clip norm {ours} vs torch {norm}")
                worst = max(worst, abs(norm - ours))
        for group in opt.param_groups:
            group["lr"] = lrs[s]
        opt.step()
        for i, p in enumerate(params):
            diff = float(np.max(np.abs(t[f"after.{s}.{i}"] - p.detach().numpy())))
            worst = max(worst, diff)
    return worst, notes


def main():
    if len(sys.argv) != 3:
        print("usage: check_optim.py BUILD_DIR DUMP_DIR")
        return 2
    build, dump = sys.argv[1], os.path.join(sys.argv[2], "optim")
    subprocess.run([os.path.join(build, "attn_optim_dump"), dump], check=True,
                   stdout=subprocess.DEVNULL)
    files = sorted(glob.glob(os.path.join(dump, "optim_*.safetensors")))
    if not files:
        print("FAIL optim: attn_optim_dump wrote no runs")
        return 1
    failed = 0
    for path in files:
        name = os.path.basename(path)[len("optim_"):-len(".safetensors")]
        worst, notes = replay(path)
        ok = worst <= TOL and not notes
        failed += not ok
        print(f"{'OK' if ok else 'FAIL'} optim_{name} maxdiff={worst:.2e} ({STEPS} steps)"
              + "".join(f"\n    {n}" for n in notes))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
