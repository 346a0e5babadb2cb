"""PyTorch parity for the recurrent layers: torch.nn.RNN / GRU / LSTM against `attnlab parity`.

For each case a real PyTorch module is built with torch.manual_seed, its state_dict is written
as safetensors, and the same inputs (x, initial states, optional per-row lengths) go through
PyTorch and through `BUILD_DIR/attnlab parity rnn|gru|lstm ...`. Padded batches use
pack_padded_sequence (enforce_sorted=False) / pad_packed_sequence on the PyTorch side.

Most cases run with output=all: the compared output is [y, h_n, c_n] flattened and
concatenated, and the upstream gradient covers all three, so every gradient (x, h0, c0 and
each parameter) includes the paths through the final states. One case per layer also checks
the plain contract (output=y, no initial state; h_n/c_n written beside y).

    /usr/bin/python3 tests/parity/check_rnn.py BUILD_DIR DUMP_DIR
Prints `OK <case> maxdiff=...` (or FAIL) per case and exits non-zero if any case fails.
Error measure: max|ours - torch| / max(1, max|torch|), bound 1e-5.
"""
import os
import subprocess
import sys

import numpy as np
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_io  # noqa: E402

TOL = 1e-5
B, T = 4, 6
LENGTHS = [6, 2, 5, 1]  # rows in no particular order: enforce_sorted=False

# (case name, layer, config, padded, output_all, with_initial_state)
CASES = [
    ("rnn_tanh_1layer", "rnn", dict(input_size=3, hidden_size=5), False, True, True),
    ("rnn_relu_2layer_bidir", "rnn",
     dict(input_size=3, hidden_size=5, num_layers=2, bidirectional=True, nonlinearity="relu"),
     False, True, True),
    ("rnn_tanh_2layer_bidir_padded", "rnn",
     dict(input_size=3, hidden_size=5, num_layers=2, bidirectional=True), True, True, True),
    ("rnn_plain_output", "rnn", dict(input_size=3, hidden_size=5), False, False, False),
    ("gru_1layer", "gru", dict(input_size=3, hidden_size=5), False, True, True),
    ("gru_2layer_bidir", "gru",
     dict(input_size=3, hidden_size=5, num_layers=2, bidirectional=True), False, True, True),
    ("gru_1layer_padded", "gru", dict(input_size=3, hidden_size=5), True, True, True),
    ("gru_2layer_bidir_padded", "gru",
     dict(input_size=3, hidden_size=5, num_layers=2, bidirectional=True), True, True, True),
    ("gru_plain_output_padded", "gru",
     dict(input_size=3, hidden_size=5, bidirectional=True), True, False, False),
    ("lstm_1layer", "lstm", dict(input_size=3, hidden_size=5), False, True, True),
    ("lstm_2layer_bidir", "lstm",
     dict(input_size=3, hidden_size=5, num_layers=2, bidirectional=True), False, True, True),
    ("lstm_1layer_bidir_padded", "lstm",
     dict(input_size=3, hidden_size=5, bidirectional=True), True, True, True),
    ("lstm_2layer_padded", "lstm", dict(input_size=3, hidden_size=5, num_layers=2), True, True,
     True),
    ("lstm_2layer_bidir_padded", "lstm",
     dict(input_size=3, hidden_size=5, num_layers=2, bidirectional=True), True, True, True),
    ("lstm_nobias", "lstm", dict(input_size=3, hidden_size=5, bias=False), False, True, True),
    ("lstm_plain_output", "lstm", dict(input_size=3, hidden_size=5, num_layers=2), False, False,
     False),
]


def rel_err(ours, ref):
    ours = np.asarray(ours, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if ours.shape != ref.shape:
        return float("inf"), float("inf"), f"shape {ours.shape} vs torch {ref.shape}"
    diff = float(np.max(np.abs(ours - ref))) if ours.size else 0.0
    scale = max(1.0, float(np.max(np.abs(ref)))) if ref.size else 1.0
    return diff / scale, diff, ""


def build_module(layer, cfg):
    common = dict(input_size=cfg["input_size"], hidden_size=cfg["hidden_size"],
                  num_layers=cfg.get("num_layers", 1), bias=cfg.get("bias", True),
                  batch_first=True, bidirectional=cfg.get("bidirectional", False))
    if layer == "rnn":
        return torch.nn.RNN(nonlinearity=cfg.get("nonlinearity", "tanh"), **common)
    return {"gru": torch.nn.GRU, "lstm": torch.nn.LSTM}[layer](**common)


def torch_run(module, layer, x, h0, c0, padded):
    if layer == "lstm":
        init = None if h0 is None else (h0, c0)
    else:
        init = h0
    if padded:
        packed = pack_padded_sequence(x, torch.tensor(LENGTHS), batch_first=True,
                                      enforce_sorted=False)
        out, state = module(packed, init)
        y, _ = pad_packed_sequence(out, batch_first=True, total_length=T)
    else:
        y, state = module(x, init)
    h_n, c_n = state if layer == "lstm" else (state, None)
    return y, h_n, c_n


def run_case(name, layer, cfg, padded, output_all, with_initial, build_dir, dump_dir, seed):
    torch.manual_seed(seed)
    module = build_module(layer, cfg)
    states = cfg.get("num_layers", 1) * (2 if cfg.get("bidirectional", False) else 1)
    x = torch.randn(B, T, cfg["input_size"], requires_grad=True)
    h0 = c0 = None
    inputs = {"x": x}
    if with_initial:
        h0 = torch.randn(states, B, cfg["hidden_size"], requires_grad=True)
        inputs["h0"] = h0
        if layer == "lstm":
            c0 = torch.randn(states, B, cfg["hidden_size"], requires_grad=True)
            inputs["c0"] = c0
    y, h_n, c_n = torch_run(module, layer, x, h0, c0, padded)
    parts = [y, h_n] + ([c_n] if c_n is not None else [])
    out = torch.cat([p.reshape(-1) for p in parts]) if output_all else y
    gy = torch.randn(out.shape)
    out.backward(gy)

    base = os.path.join(dump_dir, name)
    weights = {k: v.detach().numpy().astype(np.float32) for k, v in module.state_dict().items()}
    safetensors_io.save(base + ".weights.safetensors", weights)
    tensors = {k: v.detach().numpy().astype(np.float32) for k, v in inputs.items()}
    tensors["gy"] = gy.numpy().astype(np.float32)
    if padded:
        tensors["lengths"] = np.array(LENGTHS, dtype=np.int64)
    safetensors_io.save(base + ".inputs.safetensors", tensors)

    config = [f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in cfg.items()]
    config.append("output=" + ("all" if output_all else "y"))
    cmd = [os.path.join(build_dir, "attnlab"), "parity", layer, "--config", *config,
           "--weights", base + ".weights.safetensors", "--inputs", base + ".inputs.safetensors",
           "--out", base + ".out.safetensors"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return [("run", float("inf"), float("inf"), f"exit {proc.returncode}: {proc.stderr.strip()}")]
    ours, _ = safetensors_io.load(base + ".out.safetensors")

    results = []
    if output_all:  # split the flat output back into its parts for the report
        offset = 0
        for label, p in zip(["y", "h_n", "c_n"], parts):
            n = p.numel()
            results.append((label,) + rel_err(ours["y"][offset:offset + n], p.detach().numpy().reshape(-1)))
            offset += n
        if offset != ours["y"].size:
            results.append(("y", float("inf"), float("inf"), f"size {ours['y'].size} vs {offset}"))
    else:
        results.append(("y",) + rel_err(ours["y"], y.detach().numpy()))
    for label, ref in [("h_n", h_n), ("c_n", c_n)]:
        if ref is None:
            continue
        if label not in ours:
            results.append((label, float("inf"), float("inf"), "not written"))
        else:
            results.append((label + "(out)",) + rel_err(ours[label], ref.detach().numpy()))
    leaves = list(inputs.items()) + list(module.named_parameters())
    for label, t in leaves:
        key = "grad." + label
        ref = t.grad if t.grad is not None else torch.zeros_like(t)
        if key not in ours:
            results.append((key, float("inf"), float("inf"), "attnlab produced no gradient"))
        else:
            results.append((key,) + rel_err(ours[key], ref.numpy()))
    return results


def main():
    build_dir, dump_root = sys.argv[1], sys.argv[2]
    if not os.path.exists(os.path.join(build_dir, "attnlab")):
        print(f"FAIL rnn parity: {build_dir}/attnlab not found")
        return 1
    dump_dir = os.path.join(dump_root, "rnn")
    os.makedirs(dump_dir, exist_ok=True)
    failed = 0
    for i, (name, layer, cfg, padded, output_all, with_initial) in enumerate(CASES):
        try:
            results = run_case(name, layer, cfg, padded, output_all, with_initial, build_dir,
                               dump_dir, seed=100 + i)
        except Exception as e:  # noqa: BLE001  (a crash is one failed case)
            print(f"FAIL {name}: {type(e).__name__}: {e}")
            failed += 1
            continue
        worst = max(r[1] for r in results)
        ok = worst <= TOL
        failed += not ok
        maxdiff = max(r[2] for r in results)
        detail = " ".join(f"{label}:{err:.1e}" for label, err, _, _ in results)
        print(f"{'OK  ' if ok else 'FAIL'} {name:<30} maxdiff={maxdiff:.2e} maxrel={worst:.2e} "
              f"[{len(results)} tensors] {detail}")
        if not ok:
            for label, err, diff, why in results:
                if err > TOL:
                    print(f"       {label}: rel {err:.2e} maxdiff {diff:.2e} {why}")
    print(f"rnn parity: {len(CASES) - failed}/{len(CASES)} cases within {TOL:g}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
