// W1 (reversal encoder-decoder) and W4 (decoder-only char LM): transformer training steps,
// composed here from nn/transformer's layers the way bench/torch_reference.py composes
// torch.nn.Transformer / TransformerEncoder, so both sides do the same work:
//   W1  post-norm, d 128, 8 heads, d_ff 512 (ReLU), 2 encoder + 2 decoder layers with final
//       norms, vocab 16, source 32, target 33, batch 64, Adam lr 1e-3, dropout 0; token
//       embeddings scaled by sqrt(d) plus sinusoidal positions.
//   W4  pre-norm, 4 layers, d 128, 4 heads, d_ff 512 (GELU), causal, context 128, vocab 64,
//       batch 32, learned positions, final norm, AdamW (lr 1e-3, weight decay 0.01).
//   W4d W4 with dropout 0.1 where PyTorch's TransformerEncoderLayer puts it (attention weights,
//       after attention, inside and after the feed-forward), as the experiments train: the
//       dropout overhead is W4d's time against W4's.
#include <cmath>
#include <memory>
#include <vector>

#include "autograd/functional.h"
#include "bench/workloads/workloads.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "nn/norms.h"
#include "nn/positional/sinusoidal.h"
#include "nn/transformer/decoder_layer.h"
#include "nn/transformer/encoder_layer.h"
#include "train/optim/adam.h"

namespace attn::bench {

namespace {

// Forward GEMM FLOPs of one layer (same formula as torch_reference.transformer_flops):
// projections (4 d^2 per token for self-attention; cross-attention has Q,O on the queries and
// K,V on the memory), the two attention products (2 * 2 * pairs * d), and the feed-forward.
double layer_flops(double tokens_q,
                   double tokens_kv,
                   double self_pairs,
                   double cross_pairs,
                   double d,
                   double ff,
                   bool cross) {
  double f = 2 * tokens_q * 4 * d * d + 2 * 2 * self_pairs * d;
  if (cross) f += 2 * tokens_q * 2 * d * d + 2 * tokens_kv * 2 * d * d + 2 * 2 * cross_pairs * d;
  return f + 2 * tokens_q * 2 * d * ff;
}

// ---- W1 ---------------------------------------------------------------------------------------
constexpr int64_t kB1 = 64, kSrc = 32, kTgt = 33, kV1 = 16, kD = 128, kH1 = 8, kFF = 512;

class ReversalTransformer : public nn::Module {
 public:
  explicit ReversalTransformer(Generator& gen) : Module("ReversalTransformer") {
    nn::TransformerLayerOptions o;
    o.d_model = kD;
    o.nhead = kH1;
    o.dim_feedforward = kFF;
    o.dropout = 0;
    src_emb = register_module("src_emb", std::make_shared<nn::Embedding>(kV1, kD, gen));
    tgt_emb = register_module("tgt_emb", std::make_shared<nn::Embedding>(kV1, kD, gen));
    for (int i = 0; i < 2; ++i) {
      enc.push_back(register_module("encoder_layer" + std::to_string(i),
                                    std::make_shared<nn::TransformerEncoderLayer>(o, gen)));
      dec.push_back(register_module("decoder_layer" + std::to_string(i),
                                    std::make_shared<nn::TransformerDecoderLayer>(o, gen)));
    }
    enc_norm = register_module("encoder_norm", std::make_shared<nn::LayerNorm>(kD));
    dec_norm = register_module("decoder_norm", std::make_shared<nn::LayerNorm>(kD));
    out = register_module("out", std::make_shared<nn::Linear>(kD, kV1, true, gen));
  }

  // src (B,S), tgt_in (B,T) ids -> logits (B,T,V)
  Var forward(const Tensor& src, const Tensor& tgt_in) {
    const real scale = static_cast<real>(std::sqrt(static_cast<double>(kD)));
    Var s = add(mul_scalar(src_emb->forward(src), scale), Var::constant(pe_src));
    for (auto& layer : enc) s = layer->forward(s);
    s = enc_norm->forward(s);
    Var y = add(mul_scalar(tgt_emb->forward(tgt_in), scale), Var::constant(pe_tgt));
    for (auto& layer : dec) y = layer->forward(y, s, {.causal = true});
    return out->forward(dec_norm->forward(y));
  }

  std::shared_ptr<nn::Embedding> src_emb, tgt_emb;
  std::vector<std::shared_ptr<nn::TransformerEncoderLayer>> enc;
  std::vector<std::shared_ptr<nn::TransformerDecoderLayer>> dec;
  std::shared_ptr<nn::LayerNorm> enc_norm, dec_norm;
  std::shared_ptr<nn::Linear> out;
  Tensor pe_src = nn::sinusoidal_table(kSrc, kD), pe_tgt = nn::sinusoidal_table(kTgt, kD);
};

struct W1State {
  Generator gen{0};
  ReversalTransformer model{gen};
  train::Adam opt{model.parameters(), {.lr = 1e-3}};
  Tensor src = random_ids(kB1, kSrc, 3, kV1, 11);
  Tensor tgt_in = Tensor::empty({kB1, kTgt}), tgt_out = Tensor::empty({kB1, kTgt});

  W1State() {
    for (int64_t b = 0; b < kB1; ++b) {  // reversal: BOS (1), source backwards, EOS (2)
      tgt_in[b * kTgt] = 1;
      for (int64_t j = 0; j < kSrc; ++j) {
        const real id = src[b * kSrc + (kSrc - 1 - j)];
        tgt_in[b * kTgt + j + 1] = tgt_out[b * kTgt + j] = id;
      }
      tgt_out[b * kTgt + kSrc] = 2;
    }
  }
};

// ---- W4 ---------------------------------------------------------------------------------------
constexpr int64_t kB4 = 32, kCtx = 128, kV4 = 64, kH4 = 4, kLayers4 = 4;

class CharLM : public nn::Module {
 public:
  CharLM(Generator& gen, double dropout) : Module("CharLM") {
    nn::TransformerLayerOptions o;
    o.d_model = kD;
    o.nhead = kH4;
    o.dim_feedforward = kFF;
    o.dropout = dropout;
    o.norm_first = true;
    o.activation = nn::Activation::kGELU;
    emb = register_module("emb", std::make_shared<nn::Embedding>(kV4, kD, gen));
    pos = register_module("pos", std::make_shared<nn::Embedding>(kCtx, kD, gen));
    // One dropout generator for the whole model, as the models in nn/transformer/ own one
    // (none at dropout 0, so W4's weights are drawn as before).
    const std::shared_ptr<Generator> rng =
        dropout > 0 ? nn::model_dropout_generator(nullptr, gen) : nullptr;
    for (int i = 0; i < kLayers4; ++i)
      blocks.push_back(register_module("block" + std::to_string(i),
                                       std::make_shared<nn::TransformerEncoderLayer>(o, gen, rng)));
    norm = register_module("norm", std::make_shared<nn::LayerNorm>(kD));
    head = register_module("head", std::make_shared<nn::Linear>(kD, kV4, true, gen));
  }

  // x (B,T) ids -> logits (B,T,V)
  Var forward(const Tensor& x) {
    Var h = add(emb->forward(x), pos->forward(Tensor::arange(x.size(1))));
    for (auto& b : blocks) h = b->forward(h, {.causal = true});
    return head->forward(norm->forward(h));
  }

  std::shared_ptr<nn::Embedding> emb, pos;
  std::vector<std::shared_ptr<nn::TransformerEncoderLayer>> blocks;
  std::shared_ptr<nn::LayerNorm> norm;
  std::shared_ptr<nn::Linear> head;
};

struct W4State {
  explicit W4State(double dropout) : model(gen, dropout) {
    const Tensor ids = random_ids(kB4, kCtx + 1, 0, kV4, 13);  // next-character targets
    for (int64_t b = 0; b < kB4; ++b)
      for (int64_t t = 0; t < kCtx; ++t) {
        x[b * kCtx + t] = ids[b * (kCtx + 1) + t];
        y[b * kCtx + t] = ids[b * (kCtx + 1) + t + 1];
      }
  }

  Generator gen{0};
  CharLM model;
  train::AdamW opt{model.parameters(), {.lr = 1e-3, .weight_decay = 0.01}};
  Tensor x = Tensor::empty({kB4, kCtx}), y = Tensor::empty({kB4, kCtx});
};

}  // namespace

bool w1_w4_available() {
  return true;
}

std::vector<BenchCase> w1_cases() {
  auto s = std::make_shared<std::unique_ptr<W1State>>();
  BenchCase c;
  c.workload = "W1";
  c.name = "transformer enc-dec train step";
  const double enc = layer_flops(kB1 * kSrc, 0, kB1 * kSrc * kSrc, 0, kD, kFF, false);
  const double dec =
      layer_flops(kB1 * kTgt, kB1 * kSrc, kB1 * kTgt * kTgt, kB1 * kTgt * kSrc, kD, kFF, true);
  c.flops = 3 * (2 * enc + 2 * dec + 2.0 * kB1 * kTgt * kD * kV1);
  c.tokens = static_cast<double>(kB1 * kTgt);
  c.setup = [s] { *s = std::make_unique<W1State>(); };
  c.step = [s] {
    W1State& st = **s;
    st.opt.zero_grad();
    cross_entropy(st.model.forward(st.src, st.tgt_in), st.tgt_out).backward();
    st.opt.step();
  };
  c.teardown = [s] { s->reset(); };
  return {c};
}

namespace {

// W4 (dropout 0) and W4d (dropout 0.1): the same model, data and FLOP count.
BenchCase char_lm_case(const char* workload, const char* name, double dropout) {
  auto s = std::make_shared<std::unique_ptr<W4State>>();
  BenchCase c;
  c.workload = workload;
  c.name = name;
  const double layer = layer_flops(kB4 * kCtx, 0, kB4 * kCtx * kCtx, 0, kD, kFF, false);
  c.flops = 3 * (kLayers4 * layer + 2.0 * kB4 * kCtx * kD * kV4);
  c.tokens = static_cast<double>(kB4 * kCtx);
  c.setup = [s, dropout] { *s = std::make_unique<W4State>(dropout); };
  c.step = [s] {
    W4State& st = **s;
    st.opt.zero_grad();
    cross_entropy(st.model.forward(st.x), st.y).backward();
    st.opt.step();
  };
  c.teardown = [s] { s->reset(); };
  return c;
}

}  // namespace

std::vector<BenchCase> w4_cases() {
  return {char_lm_case("W4", "decoder-only char LM train step", 0)};
}

std::vector<BenchCase> w4d_cases() {
  return {char_lm_case("W4d", "char LM train step, dropout 0.1", 0.1)};
}

}  // namespace attn::bench
