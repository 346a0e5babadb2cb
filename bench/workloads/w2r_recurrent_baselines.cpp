// W2r: W2's LSTM encoder-decoder at the sizes recurrent-baselines trains it (its defaults, through
// `attnlab train reversal --model lstm`): 2 layers of 128 units, embeddings 128, batch 64,
// reversal of 1..10 letters (vocabulary 32: 6 specials and a-z), AdamW (lr 3e-3, no weight decay)
// with gradient clipping at norm 1, one case per attention the experiment gives its LSTM:
//   none           the final encoder state is all the decoder reads;
//   bahdanau       additive attention, one decoder step at a time (the context feeds the cell);
//   luong_general  s^T W_a h scores after the decoder has run over the whole target.
// The batch is padded as the experiment's batches are: source lengths 1 + (row mod 10), so every
// batch has the longest length 10 (source (64,10), target (64,11)), padded rows frozen in the
// encoder and masked in attention and in the loss. W2 (1 layer, source 32, vocabulary 16) stays
// as it was, for its history. Each case's name carries the parameter count (paired with
// bench/torch_reference.py's twin only when both models have the same size).
#include <fmt/format.h>

#include <memory>

#include "autograd/functional.h"
#include "bench/workloads/workloads.h"
#include "nn/rnn/seq2seq.h"
#include "train/optim/adam.h"
#include "train/optim/clip.h"

namespace attn::bench {

namespace {

constexpr int64_t kBatch = 64, kMaxLen = 10, kVocab = 32, kHidden = 128, kLayers = 2;
constexpr int64_t kFirstLetter = 6;  // after the specials: pad 0, bos 1, eos 2, ...

nn::RnnSeq2SeqConfig config(nn::Seq2SeqAttention attention) {
  return {.cell = nn::RecurrentMode::kLstm,
          .attention = attention,
          .src_vocab = kVocab,
          .tgt_vocab = kVocab,
          .embed_dim = kHidden,
          .hidden_size = kHidden,
          .num_layers = kLayers};
}

int64_t row_length(int64_t row) {
  return 1 + row % kMaxLen;
}

// Reversal batch: src (B,10) = letters then pad 0; tgt_in (B,11) = bos, the letters reversed,
// pad; tgt_out (B,11) = the letters reversed, eos (2), pad.
struct ReversalBatch {
  Tensor src = Tensor::zeros({kBatch, kMaxLen});
  Tensor tgt_in = Tensor::zeros({kBatch, kMaxLen + 1}),
         tgt_out = Tensor::zeros({kBatch, kMaxLen + 1});
  ReversalBatch() {
    const Tensor letters = random_ids(kBatch, kMaxLen, kFirstLetter, kVocab, 12);
    const int64_t t = kMaxLen + 1;
    for (int64_t b = 0; b < kBatch; ++b) {
      const int64_t n = row_length(b);
      for (int64_t j = 0; j < n; ++j) src[b * kMaxLen + j] = letters[b * kMaxLen + j];
      tgt_in[b * t] = 1;
      for (int64_t j = 0; j < n; ++j)
        tgt_in[b * t + j + 1] = tgt_out[b * t + j] = src[b * kMaxLen + n - 1 - j];
      tgt_out[b * t + n] = 2;
    }
  }
};

struct BaselineState {
  explicit BaselineState(nn::Seq2SeqAttention attention) : model(config(attention), gen) {}
  Generator gen{0};
  nn::RnnSeq2Seq model;
  train::AdamW opt{model.parameters(), {.lr = 3e-3, .weight_decay = 0}};
  ReversalBatch batch;
};

// Forward GEMM FLOPs of one step on the padded shapes (same formula as
// torch_reference.w2r_flops): the LSTM layers (x W_ih and h W_hh per position), the attention
// and the output projection.
double forward_flops(nn::Seq2SeqAttention attention) {
  const double b = kBatch, s = kMaxLen, t = kMaxLen + 1, h = kHidden, e = kHidden, v = kVocab;
  const double gates = 4 * h;
  const bool additive = attention == nn::Seq2SeqAttention::kBahdanau;
  double f = 2 * b * s * (e + h) * gates + (kLayers - 1) * 2 * b * s * 2 * h * gates;  // encoder
  f += 2 * b * t * ((additive ? e + h : e) + h) * gates + (kLayers - 1) * 2 * b * t * 2 * h * gates;
  if (additive) {
    // keys W_k h_j once; per step the query W_q s, the scores v . tanh(.) and the context
    f += 2 * b * s * h * h + 2 * b * t * h * h + 2 * b * t * s * h * 2;
    return f + 2 * b * t * 2 * h * v;  // out_proj reads [s_t; c_t]
  }
  if (attention == nn::Seq2SeqAttention::kLuongGeneral)  // W_a h_j, scores, context, combine
    f += 2 * b * s * h * h + 2 * b * t * s * h * 2 + 2 * b * t * 2 * h * h;
  return f + 2 * b * t * h * v;
}

BenchCase baseline_case(nn::Seq2SeqAttention attention) {
  Generator count_gen(0);
  const int64_t params = nn::RnnSeq2Seq(config(attention), count_gen).num_parameters();
  auto s = std::make_shared<std::unique_ptr<BaselineState>>();
  BenchCase c;
  c.workload = "W2r";
  c.name = fmt::format("lstm 2x128 {} step p={}", nn::seq2seq_attention_name(attention), params);
  c.flops = 3 * forward_flops(attention);
  double scored = 0;  // the letters and eos of every row
  for (int64_t b = 0; b < kBatch; ++b) scored += static_cast<double>(row_length(b) + 1);
  c.tokens = scored;
  c.setup = [s, attention] { *s = std::make_unique<BaselineState>(attention); };
  c.step = [s] {
    BaselineState& st = **s;
    st.opt.zero_grad();
    st.model.loss(st.batch.src, st.batch.tgt_in, st.batch.tgt_out).backward();
    train::clip_grad_norm(st.model.parameters(), 1.0);
    st.opt.step();
  };
  c.teardown = [s] { s->reset(); };
  return c;
}

}  // namespace

std::vector<BenchCase> w2r_cases() {
  return {baseline_case(nn::Seq2SeqAttention::kNone),
          baseline_case(nn::Seq2SeqAttention::kBahdanau),
          baseline_case(nn::Seq2SeqAttention::kLuongGeneral)};
}

}  // namespace attn::bench
