#!/usr/bin/python3
"""The attnlab benchmark workloads (W1..W6, W2r, W4d, W9..W11) in PyTorch, for side-by-side ratios.

    /usr/bin/python3 bench/torch_reference.py --workload W3 --intra 1 --blas 2 --json

Same shapes, data layout, optimizer and FLOP counts as bench/workloads/*.cpp, and the same
case names, so scripts/bench can pair every attnlab case with its PyTorch twin. Thread
settings must be chosen before torch is imported (OpenBLAS reads OPENBLAS_NUM_THREADS when it
loads, and torch.set_num_threads does not limit OpenBLAS's own pthreads), so this script
sets the environment first and should be run once per setting in a fresh process.
"""
import argparse
import json
import math
import os
import resource
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workload", "-w", default="all", help="W1..W6, W2r, W4d, W9..W11 or all")
    p.add_argument("--filter", default="", help="only cases whose name contains this")
    p.add_argument("--intra", type=int, default=1, help="PyTorch intra-op (OpenMP) threads")
    p.add_argument("--blas", type=int, default=2, help="OpenBLAS threads")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--json", action="store_true")
    return p.parse_args()


ARGS = parse_args()
os.environ["OMP_NUM_THREADS"] = str(ARGS.intra)
os.environ["OPENBLAS_NUM_THREADS"] = str(ARGS.blas)
os.environ["MKL_NUM_THREADS"] = str(ARGS.intra)

import torch  # noqa: E402  (after the environment is set)
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

torch.set_num_threads(ARGS.intra)
torch.set_num_interop_threads(1)

import torch_experiment_models as em  # noqa: E402  (W2r and W11's models, after torch)


class Case:
    def __init__(self, workload, name, flops, tokens, setup, step, max_steps=0):
        self.workload, self.name, self.flops, self.tokens = workload, name, flops, tokens
        self.setup, self.step, self.max_steps = setup, step, max_steps


def random_ids(rows, cols, lo, hi, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(lo, hi, (rows, cols), generator=g)


# ---- W1 / W4: transformers ------------------------------------------------------------------

def sinusoidal(t, d):
    pos = torch.arange(t, dtype=torch.float32)[:, None]
    i = torch.arange(0, d, 2, dtype=torch.float32)
    angle = pos / torch.pow(10000.0, i / d)
    pe = torch.zeros(t, d)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angle), torch.cos(angle)
    return pe


class Seq2SeqTransformer(nn.Module):
    def __init__(self, vocab, d, heads, ff, layers):
        super().__init__()
        self.src_emb, self.tgt_emb = nn.Embedding(vocab, d), nn.Embedding(vocab, d)
        self.core = nn.Transformer(d, heads, layers, layers, ff, dropout=0.0, batch_first=True)
        self.out = nn.Linear(d, vocab)
        self.scale = math.sqrt(d)
        self.register_buffer("pe", sinusoidal(64, d))

    def forward(self, src, tgt_in):
        t = tgt_in.shape[1]
        mask = torch.triu(torch.full((t, t), float("-inf")), diagonal=1)
        s = self.src_emb(src) * self.scale + self.pe[: src.shape[1]]
        y = self.tgt_emb(tgt_in) * self.scale + self.pe[:t]
        return self.out(self.core(s, y, tgt_mask=mask))


def transformer_flops(tokens_q, tokens_kv, pairs, d, ff, self_attn, cross_attn):
    """Forward GEMM FLOPs of one layer: projections, the two attention products, feed-forward."""
    f = 0.0
    if self_attn:
        f += 2 * tokens_q * 4 * d * d + 2 * 2 * pairs[0] * d
    if cross_attn:
        f += 2 * tokens_q * 2 * d * d + 2 * tokens_kv * 2 * d * d + 2 * 2 * pairs[1] * d
    return f + 2 * tokens_q * 2 * d * ff


def w1_cases():
    b, s, t, v, d, h, ff = 64, 32, 33, 16, 128, 8, 512
    state = {}

    def setup():
        torch.manual_seed(0)
        model = Seq2SeqTransformer(v, d, h, ff, 2)
        src = random_ids(b, s, 3, v, 11)
        tgt_in = torch.cat([torch.ones(b, 1, dtype=torch.long), src.flip(1)], 1)
        tgt_out = torch.cat([src.flip(1), torch.full((b, 1), 2, dtype=torch.long)], 1)
        state.update(model=model, opt=torch.optim.Adam(model.parameters(), lr=1e-3),
                     src=src, tgt_in=tgt_in, tgt_out=tgt_out)

    def step():
        m, opt = state["model"], state["opt"]
        opt.zero_grad()
        logits = m(state["src"], state["tgt_in"])
        F.cross_entropy(logits.reshape(-1, v), state["tgt_out"].reshape(-1)).backward()
        opt.step()

    enc = transformer_flops(b * s, 0, (b * s * s, 0), d, ff, True, False)
    dec = transformer_flops(b * t, b * s, (b * t * t, b * t * s), d, ff, True, True)
    flops = 3 * (2 * enc + 2 * dec + 2 * b * t * d * v)
    return [Case("W1", "transformer enc-dec train step", flops, b * t, setup, step)]


class CharLM(nn.Module):
    def __init__(self, vocab, ctx, d, heads, ff, layers, dropout=0.0):
        super().__init__()
        self.emb, self.pos = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        layer = nn.TransformerEncoderLayer(d, heads, ff, dropout=dropout, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm, self.head = nn.LayerNorm(d), nn.Linear(d, vocab)
        self.register_buffer("mask", torch.triu(torch.full((ctx, ctx), float("-inf")), 1))

    def forward(self, x):
        t = x.shape[1]
        h = self.emb(x) + self.pos(torch.arange(t))
        return self.head(self.norm(self.blocks(h, mask=self.mask[:t, :t])))


def char_lm_case(workload, name, dropout):
    """W4 (dropout 0) and W4d (dropout 0.1, in training mode: on the attention weights, after
    attention, inside and after the feed-forward, as attnlab's TransformerEncoderLayer)."""
    b, t, v, d, h, ff, layers = 32, 128, 64, 128, 4, 512, 4
    state = {}

    def setup():
        torch.manual_seed(0)
        model = CharLM(v, t, d, h, ff, layers, dropout)
        model.train()
        ids = random_ids(b, t + 1, 0, v, 13)
        state.update(model=model, opt=torch.optim.AdamW(model.parameters(), lr=1e-3),
                     x=ids[:, :-1].contiguous(), y=ids[:, 1:].contiguous())

    def step():
        m, opt = state["model"], state["opt"]
        opt.zero_grad()
        F.cross_entropy(m(state["x"]).reshape(-1, v), state["y"].reshape(-1)).backward()
        opt.step()

    layer = transformer_flops(b * t, 0, (b * t * t, 0), d, ff, True, False)
    flops = 3 * (layers * layer + 2 * b * t * d * v)
    return Case(workload, name, flops, b * t, setup, step)


def w4_cases():
    return [char_lm_case("W4", "decoder-only char LM train step", 0.0)]


def w4d_cases():
    return [char_lm_case("W4d", "char LM train step, dropout 0.1", 0.1)]


# ---- W2: LSTM seq2seq with Luong dot attention ---------------------------------------------

class LuongSeq2Seq(nn.Module):
    def __init__(self, vocab, d):
        super().__init__()
        self.enc_emb, self.dec_emb = nn.Embedding(vocab, d), nn.Embedding(vocab, d)
        self.encoder = nn.LSTM(d, d, batch_first=True)
        self.decoder = nn.LSTM(d, d, batch_first=True)
        self.combine = nn.Linear(2 * d, d, bias=False)
        self.out = nn.Linear(d, vocab)

    def forward(self, src, tgt_in):
        mem, state = self.encoder(self.enc_emb(src))
        s, _ = self.decoder(self.dec_emb(tgt_in), state)
        w = torch.softmax(s @ mem.transpose(1, 2), dim=-1)  # (B,T,S)
        c = w @ mem
        return self.out(torch.tanh(self.combine(torch.cat([c, s], 2))))


def w2_cases():
    b, s, t, v, d = 64, 32, 33, 16, 128
    state = {}

    def setup():
        torch.manual_seed(0)
        model = LuongSeq2Seq(v, d)
        src = random_ids(b, s, 3, v, 11)
        tgt_in = torch.cat([torch.ones(b, 1, dtype=torch.long), src.flip(1)], 1)
        tgt_out = torch.cat([src.flip(1), torch.full((b, 1), 2, dtype=torch.long)], 1)
        state.update(model=model, opt=torch.optim.Adam(model.parameters(), lr=1e-3),
                     src=src, tgt_in=tgt_in, tgt_out=tgt_out)

    def step():
        m, opt = state["model"], state["opt"]
        opt.zero_grad()
        logits = m(state["src"], state["tgt_in"])
        F.cross_entropy(logits.reshape(-1, v), state["tgt_out"].reshape(-1), ignore_index=0).backward()
        opt.step()

    gates = 4 * d
    fwd = (2.0 * b * s * 2 * d * gates + 2.0 * b * t * 2 * d * gates + 2 * 2.0 * b * t * s * d
           + 2.0 * b * t * 2 * d * d + 2.0 * b * t * d * v)
    return [Case("W2", "lstm seq2seq luong-dot train step", 3 * fwd, b * t, setup, step)]


# ---- W3: RNN vs self-attention ----------------------------------------------------------------

def attention(q, k, v):
    return torch.softmax(q @ k.transpose(1, 2) / math.sqrt(q.shape[-1]), dim=-1) @ v


def w3_cases():
    d, cases = 64, []
    for backward in (False, True):
        for t in (16, 64, 256, 1024):
            tag = "fwd+bwd" if backward else "fwd"
            st = {}

            def rnn_setup(st=st, t=t, backward=backward):
                torch.manual_seed(0)
                st["rnn"] = nn.RNN(d, d, batch_first=True)
                st["x"] = torch.randn(1, t, d, requires_grad=backward)

            def rnn_step(st=st, backward=backward):
                y, _ = st["rnn"](st["x"])
                if backward:
                    st["rnn"].zero_grad()
                    st["x"].grad = None
                    y.sum().backward()

            at = {}

            def attn_setup(at=at, t=t, backward=backward):
                torch.manual_seed(1)
                for n in "qkv":
                    at[n] = torch.randn(1, t, d, requires_grad=backward)

            def attn_step(at=at, backward=backward):
                y = attention(at["q"], at["k"], at["v"])
                if backward:
                    for n in "qkv":
                        at[n].grad = None
                    y.sum().backward()

            mult = 3 if backward else 1
            cases.append(Case("W3", f"rnn {tag} T={t}", 2 * 2.0 * t * d * d * mult, t,
                              rnn_setup, rnn_step))
            cases.append(Case("W3", f"attention {tag} T={t}", 2 * 2.0 * t * t * d * mult, t,
                              attn_setup, attn_step))
    return cases


# ---- W5: naive attention memory (PyTorch 1.13 has no blockwise CPU kernel) -----------------

def w5_cases():
    d, cases = 64, []
    for t in (1024, 2048, 4096, 8192):
        st = {}

        def setup(st=st, t=t):
            torch.manual_seed(5)
            for n in "qkv":
                st[n] = torch.randn(1, t, d, requires_grad=True)
            st["dy"] = torch.randn(1, t, d)

        def step(st=st):
            for n in "qkv":
                st[n].grad = None
            attention(st["q"], st["k"], st["v"]).backward(st["dy"])

        cases.append(Case("W5", f"naive fwd+bwd T={t}", 2.0 * t * t * d * 6, t, setup, step,
                          max_steps=3 if t >= 4096 else 0))
    return cases


# ---- W6: causal vs full attention (PyTorch 1.13 has no fused sdpa: mask, softmax, matmul) -----

def w6_cases():
    heads, d, tokens, cases = 4, 32, 4096, []
    for kv_heads in (heads, 1):  # multi-head, then multi-query (one key/value head for all 4)
        for t in (128, 256, 512, 1024):
            batch = tokens // t
            for causal in (False, True):
                st = {}

                def setup(st=st, t=t, batch=batch, kv_heads=kv_heads):
                    torch.manual_seed(6)
                    st["q"] = torch.randn(batch, heads, t, d, requires_grad=True)
                    for n in "kv":
                        st[n] = torch.randn(batch, kv_heads, t, d, requires_grad=True)
                    st["dy"] = torch.randn(batch, heads, t, d)
                    st["hidden"] = torch.ones(t, t, dtype=torch.bool).triu(1)

                def step(st=st, causal=causal):
                    for n in "qkv":
                        st[n].grad = None
                    # A shared key/value head is broadcast to the query heads (a view; its
                    # gradient sums over them): PyTorch 1.13 has no grouped-query sdpa.
                    k = st["k"].expand(-1, heads, -1, -1)
                    v = st["v"].expand(-1, heads, -1, -1)
                    scores = st["q"] @ k.transpose(-2, -1) / math.sqrt(d)
                    if causal:
                        scores = scores.masked_fill(st["hidden"], float("-inf"))
                    (torch.softmax(scores, dim=-1) @ v).backward(st["dy"])

                pairs = t * (t + 1) / 2.0 if causal else float(t) * t
                name = (f"{'mqa ' if kv_heads == 1 else ''}{'causal' if causal else 'full'}"
                        f" fwd+bwd T={t}")
                cases.append(Case("W6", name, 2.0 * batch * heads * pairs * d * 2 * 3, tokens,
                                  setup, step))
    return cases


# ---- W9: sliding-window attention, dense with a (T,T) band mask (PyTorch has no banded kernel) --

def w9_cases():
    d, window, cases = 64, 64, []
    for t in (512, 1024, 2048, 4096, 8192):
        st = {}

        def setup(st=st, t=t):
            torch.manual_seed(9)
            for n in "qkv":
                st[n] = torch.randn(1, 1, t, d, requires_grad=True)
            st["dy"] = torch.randn(1, 1, t, d)
            r = torch.arange(t)
            st["hidden"] = (r[:, None] - r[None, :]).abs() > window

        def step(st=st):
            for n in "qkv":
                st[n].grad = None
            scores = st["q"] @ st["k"].transpose(-2, -1) / math.sqrt(d)
            scores = scores.masked_fill(st["hidden"], float("-inf"))
            (torch.softmax(scores, dim=-1) @ st["v"]).backward(st["dy"])

        cases.append(Case("W9", f"dense masked fwd+bwd T={t}", 2.0 * t * t * d * 6, t, setup,
                          step, max_steps=3 if t >= 4096 else 0))
    return cases


# ---- W10: the S6 selective scan as a Python loop over time (PyTorch has no CPU scan kernel) ---
# The same recurrence and shapes as attnlab's W10 (B 4, E 64, N 16; A = -U(0.5, 16), delta in
# [0.001, 0.2]); its name pairs it with attnlab's sequential tape scan, the other step-by-step
# autograd. h_t = exp(delta_t A) h_{t-1} + delta_t B_t u_t,  y_t = C_t . h_t + D u_t.

def w10_cases():
    b, e, n, cases = 4, 64, 16, []
    for t in (64, 256, 1024):
        st = {}

        def setup(st=st, t=t):
            torch.manual_seed(10)
            st["u"] = torch.randn(b, t, e, requires_grad=True)
            st["delta"] = (torch.rand(b, t, e) * 0.199 + 0.001).requires_grad_()
            st["A"] = (-(torch.rand(e, n) * 15.5 + 0.5)).requires_grad_()
            st["B"] = torch.randn(b, t, n, requires_grad=True)
            st["C"] = torch.randn(b, t, n, requires_grad=True)
            st["D"] = torch.randn(e, requires_grad=True)
            st["dy"] = torch.randn(b, t, e)

        def step(st=st, t=t):
            names = ("u", "delta", "A", "B", "C", "D")
            for k in names:
                st[k].grad = None
            u, dl, a, bm, cm, dv = (st[k] for k in names)
            h, ys = torch.zeros(b, e, n), []
            for i in range(t):
                d = dl[:, i, :, None]  # (b, e, 1)
                h = torch.exp(d * a) * h + d * bm[:, i, None, :] * u[:, i, :, None]
                ys.append((h * cm[:, i, None, :]).sum(-1) + dv * u[:, i])
            torch.stack(ys, 1).backward(st["dy"])

        # per step and (b, e, n): exp, 5 multiplies, 2 adds forward; about twice that backward
        cases.append(Case("W10", f"sequential tape fwd+bwd T={t}", 24.0 * b * t * e * n, b * t,
                          setup, step, max_steps=5 if t >= 1024 else 0))
    return cases


# ---- W2r, W11: the experiments' own models (bench/torch_experiment_models.py) ---------------
# A case's name carries its parameter count, as attnlab's does: a twin of another size does not
# pair with it (scripts/bench shows no ratio).

def params_of(model):
    return sum(p.numel() for p in model.parameters())


def w2r_cases():
    """recurrent-baselines' LSTM: 2x128, batch 64, reversal 1..10 (lengths 1 + row mod 10),
    vocabulary 32, AdamW lr 3e-3 without weight decay, gradient clipping at norm 1."""
    b, s, v = 64, 10, 32
    cases = []
    for attention in ("none", "bahdanau", "luong_general"):
        st = {}

        def setup(st=st, attention=attention):
            torch.manual_seed(0)
            model = em.BaselineSeq2Seq(attention)
            lengths = [1 + r % s for r in range(b)]
            letters = random_ids(b, s, 6, v, 12)
            src = torch.zeros(b, s, dtype=torch.long)
            tgt_in = torch.zeros(b, s + 1, dtype=torch.long)
            tgt_out = torch.zeros(b, s + 1, dtype=torch.long)
            for r, n in enumerate(lengths):
                src[r, :n] = letters[r, :n]
                tgt_in[r, 0], tgt_in[r, 1:n + 1] = 1, src[r, :n].flip(0)
                tgt_out[r, :n], tgt_out[r, n] = src[r, :n].flip(0), 2
            st.update(model=model, src=src, tgt_in=tgt_in, tgt_out=tgt_out,
                      opt=torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0))

        def step(st=st):
            st["opt"].zero_grad()
            st["model"].loss(st["src"], st["tgt_in"], st["tgt_out"]).backward()
            torch.nn.utils.clip_grad_norm_(st["model"].parameters(), 1.0)
            st["opt"].step()

        params = params_of(em.BaselineSeq2Seq(attention))
        scored = sum(2 + r % s for r in range(b))
        cases.append(Case("W2r", f"lstm 2x128 {attention} step p={params}",
                          3 * em.w2r_flops(attention), scored, setup, step))
    return cases


def w11_cases():
    """attention-zoo's titans-mac model, batch 32, Adam lr 3e-3: recall (6 pairs: T 14,
    vocabulary and classes 43) and majority (T 64, vocabulary 15, 2 classes)."""
    b, cases = 32, []
    for label, t, vocab, classes in (("recall", 14, 43, 43), ("majority", 64, 15, 2)):
        st = {}

        def setup(st=st, t=t, vocab=vocab, classes=classes):
            torch.manual_seed(0)
            model = em.TitansMixerModel(vocab, t, classes)
            st.update(model=model, opt=torch.optim.Adam(model.parameters(), lr=3e-3),
                      ids=random_ids(b, t, 6, vocab, 17),
                      labels=random_ids(b, 1, 0, classes, 18)[:, 0])

        def step(st=st):
            st["opt"].zero_grad()
            F.cross_entropy(st["model"](st["ids"]), st["labels"]).backward()
            st["opt"].step()

        params = params_of(em.TitansMixerModel(vocab, t, classes))
        cases.append(Case("W11", f"titans-mac {label} step T={t} p={params}",
                          3 * em.titans_flops(t, classes), b * t, setup, step))
    return cases


WORKLOADS = {"W1": w1_cases, "W2": w2_cases, "W2r": w2r_cases, "W3": w3_cases, "W4": w4_cases,
             "W4d": w4d_cases, "W5": w5_cases, "W6": w6_cases, "W9": w9_cases, "W10": w10_cases,
             "W11": w11_cases}
BY_UPPER = {k.upper(): k for k in WORKLOADS}  # ids match in any case: w4d names W4d


def measure(case, warmup, steps):
    if case.max_steps:
        steps, warmup = min(steps, case.max_steps), min(warmup, 1)
    case.setup()
    for _ in range(warmup):
        case.step()
    ms = []
    for _ in range(steps):
        t0 = time.perf_counter()
        case.step()
        ms.append((time.perf_counter() - t0) * 1e3)
    ms.sort()
    n = len(ms)
    med = ms[n // 2] if n % 2 else 0.5 * (ms[n // 2 - 1] + ms[n // 2])
    return {"workload": case.workload, "name": case.name, "steps": n, "median_ms": med,
            "min_ms": ms[0], "max_ms": ms[-1], "gflops": case.flops / (med * 1e-3) * 1e-9,
            "tokens_per_s": case.tokens / (med * 1e-3),
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main():
    ids = (list(WORKLOADS) if ARGS.workload.lower() == "all"
           else [BY_UPPER.get(ARGS.workload.upper(), ARGS.workload)])
    for w in ids:
        if w not in WORKLOADS:
            print(f"error: unknown workload {w!r} (known: {' '.join(WORKLOADS)} all)",
                  file=sys.stderr)
            return 2
    results = []
    if not ARGS.json:
        print(f"torch {torch.__version__}: intra-op {ARGS.intra}, OpenBLAS {ARGS.blas} threads")
    for w in ids:
        for case in WORKLOADS[w]():
            if ARGS.filter and ARGS.filter not in case.name:
                continue
            r = measure(case, ARGS.warmup, ARGS.steps)
            results.append(r)
            if not ARGS.json:
                print(f"{r['workload']:<4} {r['name']:<36} {r['steps']:>5} {r['median_ms']:>10.3f}"
                      f" {r['min_ms']:>10.3f} {r['max_ms']:>10.3f} {r['gflops']:>8.1f}", flush=True)
    if ARGS.json:
        print(json.dumps({"tool": "torch", "version": torch.__version__, "intra": ARGS.intra,
                          "blas": ARGS.blas, "warmup": ARGS.warmup, "steps": ARGS.steps,
                          "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
