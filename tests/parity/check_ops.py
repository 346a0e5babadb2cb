"""PyTorch parity for every op registry row.

attn_parity_dump wrote each row's inputs, upstream gradient gy, our output y and our input
gradients. Here the same inputs go through the row's PyTorch expression in float32; we compare
y and every input gradient with err = max|ours - torch| / max(1, max|torch|).

    /usr/bin/python3 tests/parity/check_ops.py DUMP_DIR
Exit status 0 only when every row passes; prints `OK <row> ...` or `FAIL <row> ...` per row.
"""
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F  # noqa: F401  (used by registry expressions)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_io  # noqa: E402


def rel_err(ours, ref):
    ours = np.asarray(ours, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if ours.shape != ref.shape:
        return float("inf"), f"shape {ours.shape} vs torch {ref.shape}"
    if ours.size == 0:
        return 0.0, ""
    diff = np.max(np.abs(ours - ref))
    return diff / max(1.0, float(np.max(np.abs(ref)))), f"maxdiff={diff:.2e}"


def check_row(spec, dump_dir):
    tensors, _ = safetensors_io.load(os.path.join(dump_dir, spec["name"] + ".safetensors"))
    env = {"torch": torch, "F": F, "math": __import__("math")}
    leaves = {}
    for inp in spec["inputs"]:
        arr = tensors["in." + inp["name"]]
        if inp["kind"] == "index":
            env[inp["name"]] = torch.from_numpy(arr.astype(np.int64))
        elif inp["kind"] == "mask":
            env[inp["name"]] = torch.from_numpy(arr != 0)
        else:
            t = torch.from_numpy(arr.astype(np.float32)).requires_grad_(inp["grad"])
            env[inp["name"]] = t
            if inp["grad"]:
                leaves[inp["name"]] = t
    y = eval(spec["torch"], env)  # noqa: S307  (expressions come from our own registry)
    results = [("y",) + rel_err(tensors["y"], y.detach().numpy())]
    if leaves and y.requires_grad:
        y.backward(torch.from_numpy(tensors["gy"].astype(np.float32)))
        for name, t in leaves.items():
            ref = t.grad if t.grad is not None else torch.zeros_like(t)
            key = "grad." + name
            if key not in tensors:
                results.append((key, float("inf"), "attnlab produced no gradient"))
                continue
            results.append((key,) + rel_err(tensors[key], ref.numpy()))
    return results


def main():
    dump_dir = sys.argv[1]
    with open(os.path.join(dump_dir, "manifest.json")) as f:
        manifest = json.load(f)
    torch.manual_seed(0)
    failed = 0
    for spec in manifest:
        tol = spec["tol"]
        try:
            results = check_row(spec, dump_dir)
        except Exception as e:  # a broken expression is a failure, not a crash
            print(f"FAIL {spec['name']}: {type(e).__name__}: {e}")
            failed += 1
            continue
        worst = max(r[1] for r in results)
        detail = " ".join(f"{name}:{err:.1e}({d})" for name, err, d in results)
        status = "OK  " if worst <= tol else "FAIL"
        failed += worst > tol
        note = f"  [tol {tol:g}: {spec['note']}]" if spec["note"] else ""
        print(f"{status} {spec['name']:<28} maxrel={worst:.2e} {detail}{note}")
    print(f"parity: {len(manifest) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
