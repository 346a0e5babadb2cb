#!/usr/bin/env bash
# recurrent-baselines end to end through the attnlab executable, in quick mode: bad --models
# values exit 2 before any training; the quick run reports every model at every length with
# accuracies in [0, 1], parameter counts that follow nn.LSTM's formula, and a sub-run folder
# per model. Budgets are wall time, so nothing here depends on how far a model got in them.
#   tests/cli/experiments_baselines.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"

expect 2 "--models: cannot read 'lstm:luong'" run recurrent-baselines --models lstm:luong --out "$tmp/bad1"
expect 2 "--models lists 'lstm+none' twice" run recurrent-baselines --models lstm,lstm:none \
  --out "$tmp/bad2"
expect 2 "--models: cannot read 'transformer:bahdanau'" run recurrent-baselines \
  --models transformer:bahdanau --out "$tmp/bad3"

check recurrent-baselines '
import os
lengths = res["lengths"]
assert lengths == [2, 6, 10, 14], lengths
models = res["models"]
assert models == ["lstm_none", "lstm_bahdanau", "transformer"], models
per = res["per_model"]
for key in models:
    m = per[key]
    for name in ("exact_match", "token_accuracy"):
        assert len(m[name]) == len(lengths), (key, name, m[name])
        assert all(0.0 <= v <= 1.0 for v in m[name]), (key, name, m[name])
    # an exactly right answer has every token right
    assert all(t >= e for e, t in zip(m["exact_match"], m["token_accuracy"])), (key, m)
    assert m["steps"] >= 1 and m["train_seconds"] > 0 and m["final_train_loss"] > 0, (key, m)
    # lengths 2, 6, 10 are trained, 14 is beyond train_max_len 10
    assert m["exact_match_trained_lengths"] == sum(m["exact_match"][:3]) / 3, (key, m)
    assert m["exact_match_longer_lengths"] == m["exact_match"][3], (key, m)
    ts, ls = m["loss_curve_seconds"], m["loss_curve"]
    assert len(ts) == len(ls) >= 1 and all(a <= b for a, b in zip(ts, ts[1:])), (key, ts)
    assert m["loss_curve_steps"][-1] == m["steps"], (key, m["loss_curve_steps"])
    assert all(x > 0 for x in ls), (key, ls)
    for f in ("metrics.csv", "results.json", "checkpoint.safetensors"):
        assert os.path.isfile(os.path.join(m["run_dir"], f)), (key, f)
    assert os.path.dirname(m["run_dir"]) == os.path.join(d, "models"), m["run_dir"]
# vocabulary 32 (26 letters + specials), embedding 128, 2 LSTM layers of 128 in the encoder and
# the decoder: 2 * 32 * 128 embeddings, 4 layers of 4 * 128 * (128 + 128) + 2 * 4 * 128 (two
# bias vectors, as nn.LSTM), output 128 * 32 + 32.
lstm = 2 * 32 * 128 + 4 * (4 * 128 * 256 + 2 * 4 * 128) + 128 * 32 + 32
assert per["lstm_none"]["parameters"] == lstm, (per["lstm_none"]["parameters"], lstm)
assert per["lstm_bahdanau"]["parameters"] > lstm
assert res["best_model_trained_lengths"] in models
stems = sorted(os.path.basename(f) for f in r["figures"])
assert stems == ["exact_match_by_length.svg", "loss_vs_step.svg", "loss_vs_wall_time.svg",
                 "token_accuracy_by_length.svg"], stems
'

finish
