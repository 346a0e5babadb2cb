// Transformer blocks and stacks: PyTorch names, equivariance, causality through the tape,
// cached decoding == recomputation, state dicts through safetensors, strict loading.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "nn/transformer/decoder_only.h"
#include "nn/transformer/encoder_only.h"
#include "nn/transformer/seq2seq.h"
#include "nn/transformer/transformer.h"

namespace attn::nn {

namespace {

TransformerOptions tiny_options(bool norm_first) {
  TransformerOptions o;
  o.d_model = 8, o.nhead = 2, o.dim_feedforward = 16, o.dropout = 0.1;
  o.num_encoder_layers = 2, o.num_decoder_layers = 2;
  o.norm_first = norm_first;
  return o;
}

bool has_name(const Module& m, const std::string& name) {
  for (const auto& [n, v] : m.named_parameters())
    if (n == name) return true;
  return false;
}

std::string load_error(Module& m, const TensorMap& state) {
  try {
    m.load_state_dict(state);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

DecoderOnlyOptions tiny_gpt(PositionKind positions) {
  DecoderOnlyOptions o;
  o.vocab_size = 11, o.max_len = 16, o.d_model = 16, o.nhead = 4, o.num_layers = 2;
  o.dim_feedforward = 32, o.positions = positions;
  if (positions == PositionKind::kRope) o.n_kv_heads = 2;
  return o;
}

}  // namespace

TEST_SUITE("nn") {
  TEST_CASE("state dict names are nn.Transformer's") {
    Generator gen(1);
    Transformer t(tiny_options(false), gen);
    for (const char* name :
         {"encoder.layers.0.self_attn.in_proj_weight", "encoder.layers.0.self_attn.in_proj_bias",
          "encoder.layers.1.self_attn.out_proj.weight", "encoder.layers.0.linear1.weight",
          "encoder.layers.0.linear2.bias", "encoder.layers.1.norm1.weight",
          "encoder.layers.1.norm2.bias", "encoder.norm.weight",
          "decoder.layers.0.multihead_attn.in_proj_weight", "decoder.layers.1.norm3.bias",
          "decoder.norm.bias"})
      CHECK_MESSAGE(has_name(t, name), name);
    // 2 encoder layers x 12 tensors + 2, 2 decoder layers x 18 tensors + 2 = 64 like PyTorch.
    CHECK(t.named_parameters().size() == 64);
    CHECK(t.decoder->layers->size() == 2);
  }

  TEST_CASE("an encoder layer without positions is permutation equivariant") {
    for (bool norm_first : {false, true}) {
      Generator gen(2);
      TransformerEncoderLayer layer(tiny_options(norm_first), gen, std::make_shared<Generator>(0));
      layer.eval();
      Tensor x = Tensor::randn({2, 5, 8}, gen);
      const int64_t perm[5] = {4, 2, 0, 3, 1};
      Tensor xp(x.shape());
      for (int64_t b = 0; b < 2; ++b)
        for (int64_t t = 0; t < 5; ++t)
          std::copy_n(x.data() + (b * 5 + perm[t]) * 8, 8, xp.data() + (b * 5 + t) * 8);
      const Tensor y = layer.forward(Var(x)).value();
      const Tensor yp = layer.forward(Var(xp)).value();
      for (int64_t b = 0; b < 2; ++b)
        for (int64_t t = 0; t < 5; ++t)
          for (int64_t c = 0; c < 8; ++c)
            CHECK(yp.at({b, t, c}) == doctest::Approx(y.at({b, perm[t], c})).epsilon(1e-5));
    }
  }

  TEST_CASE("a causal stack: dy_t/dx_{t+k} is exactly 0, through the tape") {
    Generator gen(3);
    TransformerEncoder enc(tiny_options(true), 2, true, gen);  // training mode: dropout on too
    Var x(Tensor::randn({1, 6, 8}, gen), true);
    for (int64_t t = 0; t < 6; ++t) {
      x.zero_grad();
      Var y = enc.forward(x, {.causal = true});
      Tensor dy(y.shape());
      dy.at({0, t, 1}) = 1;  // one output of row t (a sum over channels would cancel in the norm)
      y.backward(dy);
      for (int64_t s = t + 1; s < 6; ++s)
        for (int64_t c = 0; c < 8; ++c) CHECK(x.grad().at({0, s, c}) == 0);
      double own = 0;
      for (int64_t c = 0; c < 8; ++c) own += std::abs(x.grad().at({0, t, c}));
      CHECK(own > 0);
    }
  }

  TEST_CASE("decoder-only with causal = false: earlier logits see later tokens; no KV cache") {
    Generator gen(8);
    DecoderOnlyOptions o = tiny_gpt(PositionKind::kLearned);
    o.causal = false;
    DecoderOnlyTransformer two_sided(o, gen);
    two_sided.eval();
    NoGrad off;
    const Tensor a = Tensor::from_vector({1, 4}, {1, 2, 3, 4});
    const Tensor b = Tensor::from_vector({1, 4}, {1, 2, 3, 9});  // only the last token differs
    const Tensor la = two_sided.forward(a).value(), lb = two_sided.forward(b).value();
    CHECK(la.at({0, 0, 0}) != lb.at({0, 0, 0}));  // position 0 reads position 3
    std::vector<KVCache> caches = two_sided.make_caches();
    CHECK_THROWS_WITH_AS(two_sided.forward(a, &caches),
                         doctest::Contains("causal = false takes neither a KV cache"), Error);
  }

  TEST_CASE("decoder-only: cached logits equal full recomputation; cached generate = uncached") {
    for (PositionKind pk :
         {PositionKind::kLearned, PositionKind::kRope, PositionKind::kNone,
          PositionKind::kSinusoidal, PositionKind::kAlibi, PositionKind::kT5Bias}) {
      Generator gen(4);
      DecoderOnlyTransformer gpt(tiny_gpt(pk), gen);
      gpt.eval();
      Tensor ids = Tensor::from_vector({2, 6}, {1, 5, 2, 7, 3, 9, 4, 4, 8, 0, 6, 2});
      NoGrad off;
      const Tensor full = gpt.forward(ids).value();  // (2,6,11)
      auto caches = gpt.make_caches();
      const Tensor head = gpt.forward(slice(Var(ids), 1, 0, 4).value(), &caches).value();
      const Tensor t4 = gpt.forward(slice(Var(ids), 1, 4, 5).value(), &caches).value();
      const Tensor t5 = gpt.forward(slice(Var(ids), 1, 5, 6).value(), &caches).value();
      CHECK(max_abs_diff(head, slice(Var(full), 1, 0, 4).value()) < 1e-5);
      CHECK(max_abs_diff(t4, slice(Var(full), 1, 4, 5).value()) < 1e-5);
      CHECK(max_abs_diff(t5, slice(Var(full), 1, 5, 6).value()) < 1e-5);

      const Tensor prompt = slice(Var(ids), 1, 0, 3).value();
      Generator g1(7), g2(7), g3(7);
      SamplingOptions greedy, sample;
      sample.temperature = 0.9, sample.top_k = 4;
      const Tensor a = gpt.generate(prompt, 8, greedy, g1);
      const Tensor b = gpt.generate(prompt, 8, greedy, g1, std::nullopt, false);
      CHECK(a.shape() == Shape{2, 11});
      CHECK(max_abs_diff(a, b) == 0);
      const Tensor c = gpt.generate(prompt, 8, sample, g2);
      const Tensor d = gpt.generate(prompt, 8, sample, g3, std::nullopt, false);
      CHECK(max_abs_diff(c, d) == 0);
      for (int64_t j = 0; j < 3; ++j) CHECK(a.at({1, j}) == prompt.at({1, j}));
    }
  }

  TEST_CASE("generate: top_k = 1 is greedy; eos stops a row; max_len is enforced") {
    Generator gen(5);
    DecoderOnlyTransformer gpt(tiny_gpt(PositionKind::kLearned), gen);
    gpt.eval();
    const Tensor prompt = Tensor::from_vector({1, 2}, {3, 4});
    Generator g(1);
    SamplingOptions top1;
    top1.temperature = 1.5, top1.top_k = 1;
    CHECK(max_abs_diff(gpt.generate(prompt, 6, top1, g), gpt.generate(prompt, 6, {}, g)) == 0);
    const Tensor greedy = gpt.generate(prompt, 6, {}, g);
    const int64_t first = static_cast<int64_t>(greedy.at({0, 2}));
    const Tensor stopped = gpt.generate(prompt, 6, {}, g, first);
    CHECK(stopped.shape() == Shape{1, 3});
    CHECK_THROWS_AS(gpt.generate(prompt, 15, {}, g), Error);
  }

  TEST_CASE("seq2seq: greedy decoding with caches equals decoding without") {
    for (bool norm_first : {false, true}) {
      Generator gen(6);
      Seq2SeqOptions o;
      static_cast<TransformerOptions&>(o) = tiny_options(norm_first);
      o.src_vocab = 9, o.tgt_vocab = 10, o.max_len = 32, o.pad_id = 0;
      Seq2SeqTransformer model(o, gen);
      model.eval();
      const Tensor src = Tensor::from_vector({2, 5}, {3, 4, 5, 6, 7, 8, 2, 5, 0, 0});
      const Tensor a = model.greedy_decode(src, 1, 2, 12);
      const Tensor b = model.greedy_decode(src, 1, 2, 12, false);
      CHECK(a.shape() == b.shape());
      CHECK(max_abs_diff(a, b) == 0);
      // Teacher-forced logits of the decoded prefix pick the same tokens.
      Tensor tgt_in({2, a.size(1)});
      for (int64_t r = 0; r < 2; ++r) {
        tgt_in[r * a.size(1)] = 1;
        for (int64_t j = 1; j < a.size(1); ++j) tgt_in[r * a.size(1) + j] = a.at({r, j - 1});
      }
      NoGrad off;
      const Tensor logits = model.forward(src, tgt_in).value();
      for (int64_t j = 0; j < a.size(1); ++j) {
        const real* row = logits.data() + j * 10;
        CHECK(std::max_element(row, row + 10) - row == static_cast<int64_t>(a.at({0, j})));
        if (a.at({0, j}) == 2) break;
      }
    }
  }

  TEST_CASE("state dict round trip through safetensors; strict loading names every problem") {
    const auto path = (std::filesystem::temp_directory_path() /
                       ("attn_nn_state_" + std::to_string(::getpid()) + ".safetensors"))
                          .string();
    Generator g1(7), g2(8);
    Transformer a(tiny_options(false), g1), b(tiny_options(false), g2);
    a.eval(), b.eval();
    Var src(Tensor::randn({2, 4, 8}, g1)), tgt(Tensor::randn({2, 3, 8}, g1));
    const Tensor ya = a.forward(src, tgt, {}, {.causal = true}).value();
    CHECK(max_abs_diff(ya, b.forward(src, tgt, {}, {.causal = true}).value()) > 1e-3);
    a.save(path);
    b.load(path);
    CHECK(max_abs_diff(ya, b.forward(src, tgt, {}, {.causal = true}).value()) == 0);
    std::filesystem::remove(path);

    TensorMap state = a.state_dict();
    state["encoder.layers.0.self_attn.bias_k"] = Tensor::zeros({1, 1, 8});
    state.erase("decoder.norm.weight");
    state["encoder.layers.1.linear1.weight"] = Tensor::zeros({8, 16});
    const std::string msg = load_error(b, state);
    CHECK(msg.find("3 problems") != std::string::npos);
    CHECK(msg.find("unexpected 'encoder.layers.0.self_attn.bias_k'") != std::string::npos);
    CHECK(msg.find("missing 'decoder.norm.weight'") != std::string::npos);
    CHECK(msg.find("'encoder.layers.1.linear1.weight' has shape (8,16)") != std::string::npos);
    // Nothing was changed by the failed load.
    CHECK(max_abs_diff(ya, b.forward(src, tgt, {}, {.causal = true}).value()) == 0);

    // A GQA model refuses a packed checkpoint, naming what it expected.
    TransformerLayerOptions gqa = tiny_options(false);
    gqa.n_kv_heads = 1;
    auto rng = std::make_shared<Generator>(0);
    TransformerEncoderLayer packed(tiny_options(false), g1, rng), grouped(gqa, g1, rng);
    const std::string m2 = load_error(grouped, packed.state_dict());
    CHECK(m2.find("missing 'self_attn.k_proj.weight' (4,8)") != std::string::npos);
    CHECK(m2.find("unexpected 'self_attn.in_proj_weight'") != std::string::npos);
  }

  TEST_CASE("tied weights exist once; padding rows stay zero and get no gradient") {
    Generator gen(9);
    DecoderOnlyTransformer gpt(tiny_gpt(PositionKind::kLearned), gen);
    CHECK(gpt.lm_head == nullptr);
    CHECK_FALSE(has_name(gpt, "lm_head.weight"));
    CHECK(has_name(gpt, "pos_emb.weight"));
    EncoderOnlyOptions e;
    e.vocab_size = 7, e.max_len = 8, e.d_model = 8, e.nhead = 2, e.num_layers = 1;
    e.dim_feedforward = 16, e.pad_id = 0;
    EncoderOnlyTransformer bert(e, gen);
    CHECK(has_name(bert, "mlm_head.bias"));
    CHECK(has_name(bert, "emb_norm.weight"));
    for (int64_t c = 0; c < 8; ++c) CHECK(bert.tok_emb->weight.value().at({0, c}) == 0);
    Var logits = bert.forward(Tensor::from_vector({1, 4}, {3, 2, 0, 0}));
    CHECK(logits.shape() == Shape{1, 4, 7});
    sum(logits).backward();
    // Tied, every row gets the output layer's gradient; untied, the lookups are the only path
    // into tok_emb, so the padding row must end with exactly zero gradient.
    e.tie_weights = false;
    EncoderOnlyTransformer untied(e, gen);
    sum(untied.forward(Tensor::from_vector({1, 4}, {3, 2, 0, 0}))).backward();
    for (int64_t c = 0; c < 8; ++c) {
      CHECK(untied.tok_emb->weight.grad().at({0, c}) == 0);
      CHECK(untied.tok_emb->weight.grad().at({3, c}) != 0);
    }
  }
}

}  // namespace attn::nn
