"""The experiments' models in PyTorch for W2r and W11 (bench/torch_reference.py times them).

    model = BaselineSeq2Seq("bahdanau"); loss = model.loss(src, tgt_in, tgt_out)
    model = TitansMixerModel(vocab=43, t=14, classes=43); logits = model(ids)   # (B, classes)

Each mirrors the attnlab code it is paired with, layer for layer and parameter for parameter
(bench/workloads/w2r_recurrent_baselines.cpp, w11_zoo_mixer.cpp), so the two sides do the same
arithmetic; the FLOP formulas are the same as there. Imported after torch_reference.py has set
the thread environment.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

# ---- W2r: recurrent-baselines' LSTM encoder-decoder (nn/rnn/seq2seq.h) ----------------------


class BaselineSeq2Seq(nn.Module):
    """Embeddings (pad 0), an LSTM encoder whose final state (at each row's own length) starts
    an LSTM decoder of the same size, and one of three attentions: none; bahdanau (additive,
    asked with the previous state, the context fed to the cell and to the output); luong_general
    (s^T W_a h after the decoder, combined by tanh(W_c [c; s]))."""

    def __init__(self, attention, vocab=32, hidden=128, layers=2):
        super().__init__()
        self.attention, h = attention, hidden
        self.encoder_embedding = nn.Embedding(vocab, h, padding_idx=0)
        self.encoder = nn.LSTM(h, h, layers, batch_first=True)
        self.decoder_embedding = nn.Embedding(vocab, h, padding_idx=0)
        additive = attention == "bahdanau"
        self.decoder = nn.LSTM(2 * h if additive else h, h, layers, batch_first=True)
        if additive:
            self.query_proj = nn.Linear(h, h, bias=False)
            self.key_proj = nn.Linear(h, h)
            self.score_proj = nn.Linear(h, 1, bias=False)
        elif attention == "luong_general":
            self.key_proj = nn.Linear(h, h, bias=False)
            self.combine = nn.Linear(2 * h, h, bias=False)
        self.out_proj = nn.Linear(2 * h if additive else h, vocab)

    @staticmethod
    def attend(scores, memory, hidden):
        """scores (B,T,S), hidden (B,S) True at padding -> context (B,T,H)."""
        w = torch.softmax(scores.masked_fill(hidden[:, None, :], float("-inf")), dim=-1)
        return w @ memory

    def forward(self, src, tgt_in):
        hidden = src == 0
        lengths = (~hidden).sum(1)
        packed = nn.utils.rnn.pack_padded_sequence(self.encoder_embedding(src), lengths,
                                                   batch_first=True, enforce_sorted=False)
        out, state = self.encoder(packed)
        memory, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True,
                                                     total_length=src.shape[1])
        y = self.decoder_embedding(tgt_in)
        if self.attention == "bahdanau":
            keys, logits = self.key_proj(memory), []  # W_k h_j once per sentence
            for t in range(y.shape[1]):
                q = self.query_proj(state[0][-1])  # the top layer's previous state (B,H)
                e = self.score_proj(torch.tanh(q[:, None, :] + keys)).transpose(1, 2)  # (B,1,S)
                c = self.attend(e, memory, hidden)
                s, state = self.decoder(torch.cat([y[:, t:t + 1], c], 2), state)
                logits.append(self.out_proj(torch.cat([s, c], 2)))
            return torch.cat(logits, 1)
        s, _ = self.decoder(y, state)
        if self.attention == "none":
            return self.out_proj(s)
        c = self.attend(s @ self.key_proj(memory).transpose(1, 2), memory, hidden)
        return self.out_proj(torch.tanh(self.combine(torch.cat([c, s], 2))))

    def loss(self, src, tgt_in, tgt_out):
        logits = self(src, tgt_in)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1),
                               ignore_index=0)


def w2r_flops(attention, b=64, s=10, t=11, h=128, v=32, layers=2):
    """Forward GEMM FLOPs on the padded shapes (w2r_recurrent_baselines.cpp's forward_flops)."""
    gates, additive = 4 * h, attention == "bahdanau"
    f = 2 * b * s * 2 * h * gates + (layers - 1) * 2 * b * s * 2 * h * gates
    f += 2 * b * t * ((2 * h if additive else h) + h) * gates
    f += (layers - 1) * 2 * b * t * 2 * h * gates
    if additive:
        f += 2 * b * s * h * h + 2 * b * t * h * h + 2 * b * t * s * h * 2
        return f + 2 * b * t * 2 * h * v  # out_proj reads [s_t; c_t]
    if attention == "luong_general":
        f += 2 * b * s * h * h + 2 * b * t * s * h * 2 + 2 * b * t * 2 * h * h
    return f + 2 * b * t * h * v


# ---- W11: attention-zoo's titans-mac model (nn/mixer/mixer_model.h, titans_memory.h) --------


def l2_normalize(x, eps=1e-6):
    return x / torch.sqrt((x * x).sum(-1, keepdim=True) + eps)


class TitansMAC(nn.Module):
    """Softmax attention within segments of `segment` rows over [persistent; memory reads;
    segment], a linear memory M (d,d) per sequence read as l2norm(x W_q) M and written after
    each segment but the last: G = (2/n) K^T (K M - V), S = eta S - theta G, M = (1-alpha) M + S
    (eta, theta, alpha sigmoids of learned scalars; M starts at a learned M0, zero)."""

    def __init__(self, d, heads, segment, persistent):
        super().__init__()
        self.d, self.heads, self.segment, self.np = d, heads, segment, persistent
        self.q_proj, self.k_proj = nn.Linear(d, d), nn.Linear(d, d)
        self.v_proj, self.out_proj = nn.Linear(d, d), nn.Linear(d, d)
        self.mem_q = nn.Linear(d, d, bias=False)
        self.mem_k = nn.Linear(d, d, bias=False)
        self.mem_v = nn.Linear(d, d, bias=False)
        self.memory_init = nn.Parameter(torch.zeros(d, d))
        self.eta_logit = nn.Parameter(torch.zeros(1))
        self.theta_logit = nn.Parameter(torch.zeros(1))
        self.alpha_logit = nn.Parameter(torch.full((1,), -3.0))
        self.persistent_tokens = nn.Parameter(torch.randn(persistent, d) * 0.5)

    def heads_of(self, x):  # (B,L,d) -> (B,H,L,Dh)
        return x.reshape(x.shape[0], x.shape[1], self.heads, -1).transpose(1, 2)

    def segment_attention(self, xs, h, persist):
        n, np_ = xs.shape[1], self.np
        ctx = torch.cat([persist, h, xs], 1)
        q = self.heads_of(self.q_proj(ctx))[:, :, np_ + n:]  # the segment rows' queries
        k, v = self.heads_of(self.k_proj(ctx)), self.heads_of(self.v_proj(ctx))
        hide = torch.zeros(n, np_ + 2 * n, dtype=torch.bool)
        later = torch.ones(n, n, dtype=torch.bool).triu(1)
        hide[:, np_:np_ + n], hide[:, np_ + n:] = later, later
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
        y = torch.softmax(scores.masked_fill(hide, float("-inf")), -1) @ v
        return self.out_proj(y.transpose(1, 2).reshape(xs.shape[0], n, self.d))

    def forward(self, x):
        b, t, _ = x.shape
        persist = self.persistent_tokens.expand(b, -1, -1)
        m, s, outs = self.memory_init.expand(b, -1, -1), None, []
        eta, theta = torch.sigmoid(self.eta_logit), torch.sigmoid(self.theta_logit)
        alpha = torch.sigmoid(self.alpha_logit)
        for first in range(0, t, self.segment):
            xs = x[:, first:first + self.segment]
            outs.append(self.segment_attention(xs, l2_normalize(self.mem_q(xs)) @ m, persist))
            if first + self.segment < t:
                k, v = l2_normalize(self.mem_k(xs)), self.mem_v(xs)
                g = (2.0 / xs.shape[1]) * (k.transpose(1, 2) @ (k @ m - v))
                s = -(theta * g) if s is None else eta * s - theta * g
                m = (1 - alpha) * m + s
        return torch.cat(outs, 1)


class TitansMixerModel(nn.Module):
    """Token embedding + sinusoidal positions; per layer x + mixer(LN x), x + FF(LN x) with FF
    d -> 2d -> d (GELU); final LN; a linear head on the last position."""

    def __init__(self, vocab, t, classes, d=32, heads=2, layers=2, segment=8, persistent=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        pos = torch.arange(t, dtype=torch.float32)[:, None]
        angle = pos / torch.pow(10000.0, torch.arange(0, d, 2, dtype=torch.float32) / d)
        pe = torch.zeros(t, d)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(angle), torch.cos(angle)
        self.register_buffer("pe", pe)
        self.mixer_norms = nn.ModuleList(nn.LayerNorm(d) for _ in range(layers))
        self.mixers = nn.ModuleList(TitansMAC(d, heads, segment, persistent)
                                    for _ in range(layers))
        self.ff_norms = nn.ModuleList(nn.LayerNorm(d) for _ in range(layers))
        self.ffs = nn.ModuleList(nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
                                 for _ in range(layers))
        self.final_norm, self.head = nn.LayerNorm(d), nn.Linear(d, classes)

    def forward(self, ids):
        x = self.tok(ids) + self.pe[: ids.shape[1]]
        for ln1, mixer, ln2, ff in zip(self.mixer_norms, self.mixers, self.ff_norms, self.ffs):
            x = x + mixer(ln1(x))
            x = x + ff(ln2(x))
        return self.head(self.final_norm(x)[:, -1])


def titans_flops(t, classes, b=32, d=32, layers=2, segment=8, persistent=2):
    """Forward GEMM FLOPs (w11_zoo_mixer.cpp's titans_flops)."""
    f = 0.0
    for first in range(0, t, segment):
        n = min(segment, t - first)
        ctx = persistent + 2 * n
        f += 2 * b * n * d * d * 2 + 2 * b * ctx * d * d * 3 + 2 * 2 * b * n * ctx * d
        f += 2 * b * n * d * d
        if first + segment < t:
            f += 2 * b * n * d * d * 4
    return layers * f + layers * 2 * b * t * d * 2 * d * 2 + 2 * b * d * classes
