#include "experiments/common/sentence_attention.h"

#include "data/utf8.h"
#include "experiments/kit/kit.h"

namespace attn::experiments {

void add_sentence_fields(Config& config) {
  config.add_string("sentence", "the cat sat on the mat", "text whose characters are the tokens")
      .add_int("d_k", 16, "query/key/value width", {.min = 1});
  add_model_fields(config, {.d_model = 32});
  add_seed_field(config, 2, "random seed (the document seeds PyTorch with 2)");
}

EmbeddedSentence embed_characters(const std::string& sentence, int64_t d_model, Generator& gen) {
  EmbeddedSentence s;
  s.tokens = data::utf8_chars(sentence, "sentence");
  if (s.tokens.empty()) throw UsageError("--sentence: the sentence is empty");
  for (const auto& c : s.tokens)
    if (std::find(s.vocab.begin(), s.vocab.end(), c) == s.vocab.end()) s.vocab.push_back(c);
  const int64_t t = static_cast<int64_t>(s.tokens.size());
  s.ids = Tensor({1, t});
  for (int64_t i = 0; i < t; ++i)
    s.ids[i] =
        static_cast<real>(std::find(s.vocab.begin(), s.vocab.end(), s.tokens[i]) - s.vocab.begin());
  nn::Embedding emb(static_cast<int64_t>(s.vocab.size()), d_model, gen);
  NoGrad off;
  s.x = emb.forward(s.ids);
  return s;
}

SingleHead single_head(const Var& x, int64_t d_k, Generator& gen, bool scale) {
  const int64_t d_model = x.size(-1);
  nn::Linear wq(d_model, d_k, false, gen), wk(d_model, d_k, false, gen),
      wv(d_model, d_k, false, gen);
  NoGrad off;
  // (1,T,d_k) -> (1,1,T,d_k): one batch, one head
  auto head = [&](const nn::Linear& w) { return reshape(w.forward(x), {1, 1, x.size(1), d_k}); };
  nn::SdpaOptions opt;
  opt.scale = scale;
  nn::AttentionOutput a = nn::scaled_dot_product_attention(head(wq), head(wk), head(wv), opt);
  const int64_t t = x.size(1);
  return {a.weights.value().reshape({1, t, t}), a.out.value().reshape({1, t, d_k})};
}

AttentionSpread attention_spread(const Tensor& w) {
  const int64_t c = w.size(-1), t = w.numel() / c;
  AttentionSpread s{0, 0, 0, 1};
  for (int64_t r = 0; r < t; ++r) {
    double h = 0, row_max = 0;
    for (int64_t j = 0; j < c; ++j) {
      const double p = w[r * c + j];
      if (p > 0) h -= p * std::log(p);
      row_max = std::max(row_max, p);
      s.max_weight = std::max(s.max_weight, p);
      s.min_weight = std::min(s.min_weight, p);
    }
    s.mean_entropy_ratio += c > 1 ? h / std::log(static_cast<double>(c)) : 1;
    s.mean_row_max += row_max;
  }
  s.mean_entropy_ratio /= static_cast<double>(t);
  s.mean_row_max /= static_cast<double>(t);
  return s;
}

}  // namespace attn::experiments
