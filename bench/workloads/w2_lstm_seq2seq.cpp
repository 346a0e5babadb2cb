// W2: one training step of the LSTM encoder-decoder with Luong dot attention on reversal-shaped
// data: embedding 128, hidden 128, vocab 16, source 32, target 33, batch 64, Adam (lr 1e-3).
#include <memory>

#include "autograd/functional.h"
#include "bench/workloads/workloads.h"
#include "nn/rnn/seq2seq.h"
#include "train/optim/adam.h"

namespace attn::bench {

namespace {

constexpr int64_t kBatch = 64, kSrc = 32, kTgt = 33, kVocab = 16, kDim = 128;

struct Seq2SeqState {
  Generator gen{0};
  nn::RnnSeq2Seq model;
  train::Adam opt;
  Tensor src, tgt_in, tgt_out;

  Seq2SeqState()
      : model(config(), gen),
        opt(model.parameters(), {.lr = 1e-3}),
        src(random_ids(kBatch, kSrc, 3, kVocab, 11)),
        tgt_in(Tensor::empty({kBatch, kTgt})),
        tgt_out(Tensor::empty({kBatch, kTgt})) {
    // Reversal: the target is the source backwards, after BOS (1) and followed by EOS (2).
    for (int64_t b = 0; b < kBatch; ++b) {
      tgt_in[b * kTgt] = 1;
      for (int64_t j = 0; j < kSrc; ++j) {
        const real id = src[b * kSrc + (kSrc - 1 - j)];
        tgt_in[b * kTgt + j + 1] = id;
        tgt_out[b * kTgt + j] = id;
      }
      tgt_out[b * kTgt + kSrc] = 2;
    }
  }

  static nn::RnnSeq2SeqConfig config() {
    nn::RnnSeq2SeqConfig c;
    c.cell = nn::RecurrentMode::kLstm;
    c.attention = nn::Seq2SeqAttention::kLuongDot;
    c.src_vocab = c.tgt_vocab = kVocab;
    c.embed_dim = c.hidden_size = kDim;
    return c;
  }
};

// Forward GEMM FLOPs of one step.
double forward_flops() {
  const double gates = 4 * kDim;
  const double enc = 2.0 * kBatch * kSrc * (kDim * gates + kDim * gates);  // W_ih x and W_hh h
  const double dec = 2.0 * kBatch * kTgt * (kDim * gates + kDim * gates);
  const double attend = 2 * 2.0 * kBatch * kTgt * kSrc * kDim;  // scores and context
  const double combine = 2.0 * kBatch * kTgt * 2 * kDim * kDim;
  const double out = 2.0 * kBatch * kTgt * kDim * kVocab;
  return enc + dec + attend + combine + out;
}

}  // namespace

std::vector<BenchCase> w2_cases() {
  auto s = std::make_shared<std::unique_ptr<Seq2SeqState>>();
  BenchCase c;
  c.workload = "W2";
  c.name = "lstm seq2seq luong-dot train step";
  c.flops = 3 * forward_flops();
  c.tokens = static_cast<double>(kBatch * kTgt);
  c.setup = [s] { *s = std::make_unique<Seq2SeqState>(); };
  c.step = [s] {
    Seq2SeqState& st = **s;
    st.opt.zero_grad();
    st.model.loss(st.src, st.tgt_in, st.tgt_out).backward();
    st.opt.step();
  };
  c.teardown = [s] { s->reset(); };
  return {c};
}

}  // namespace attn::bench
