"""PyTorch parity for the vocabulary heads: adaptive_log_softmax against
nn.AdaptiveLogSoftmaxWithLoss, the same weights (its state_dict), log-probabilities of every
class (mode=log_prob: log_prob(x)) and the mean loss of forward(x, target) (mode=loss), with the
gradients of x and every parameter. The exchange is check_layers.py's (safetensors in and out,
`attnlab parity adaptive_log_softmax`).

    /usr/bin/python3 tests/parity/check_softmax_heads.py BUILD_DIR DUMP_DIR
Prints `OK <layer/config> <group> maxdiff=...` per tensor group; exits 1 on any failure.
"""
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_layers import SINGLE, Runner, seeded  # noqa: E402


def adaptive(in_features, n_classes, cutoffs, div_value, head_bias):
    m = nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs, div_value=div_value,
                                      head_bias=head_bias)
    for p in m.parameters():  # larger than the default init: every log-prob far from uniform
        nn.init.normal_(p, std=0.5)
    return m


def config(in_features, n_classes, cutoffs, div_value, head_bias, mode):
    c = {"in_features": in_features, "n_classes": n_classes, "div_value": div_value,
         "head_bias": "true" if head_bias else "false", "mode": mode}
    for i in range(3):
        c[f"cutoff_{i + 1}"] = cutoffs[i] if i < len(cutoffs) else 0
    return c


def cases(run):
    log_prob = lambda m, i: m.log_prob(i["x"])  # noqa: E731
    # the mean loss as a 1-element tensor: the exchange stores no rank-0 tensors
    loss = lambda m, i: m(i["x"], i["target"]).loss.reshape(1)  # noqa: E731
    for seed, (d, v, cuts, div, bias) in enumerate([(8, 20, [5, 12], 2.0, False),
                                                    (16, 60, [10, 30, 45], 2.0, True),
                                                    (12, 33, [4], 2.0, False)]):
        name = f"adaptive_log_softmax/d{d}_v{v}_c{len(cuts)}"
        seeded(60 + seed)
        x = torch.randn(7, d)
        run.check(name + "_log_prob", "adaptive_log_softmax",
                  config(d, v, cuts, div, bias, "log_prob"), adaptive(d, v, cuts, div, bias),
                  {"x": x}, log_prob, SINGLE)
        seeded(70 + seed)
        # every region hit: the shortlist, each cluster's first and last class
        ids = [0, cuts[0] - 1] + [c for c in cuts] + [v - 1] + [cuts[-1] + 1]
        target = torch.tensor(ids, dtype=torch.int64)
        run.check(name + "_loss", "adaptive_log_softmax", config(d, v, cuts, div, bias, "loss"),
                  adaptive(d, v, cuts, div, bias),
                  {"x": torch.randn(len(ids), d), "target": target}, loss, SINGLE)


def main():
    if len(sys.argv) != 3:
        print("usage: check_softmax_heads.py BUILD_DIR DUMP_DIR")
        return 2
    run = Runner(sys.argv[1], sys.argv[2])
    if not os.path.exists(run.exe):
        print(f"FAIL check_softmax_heads: no executable {run.exe} (build the attnlab target)")
        return 1
    torch.set_num_threads(1)
    cases(run)
    print(f"check_softmax_heads: {run.count} cases, {run.failed} failure(s)")
    return 1 if run.failed else 0


if __name__ == "__main__":
    sys.exit(main())
