#include "experiments/interpretability/winograd_task.h"

#include <string>

#include "autograd/functional.h"
#include "autograd/mode.h"

namespace attn::experiments {

namespace {

const std::vector<std::string> kTemplate{"the", "because", "it", "was"};
const std::vector<std::string> kNouns{"cat", "dog", "fox", "owl", "ram", "bee",
                                      "elk", "ant", "hen", "yak", "cow", "pig"};
// Signs +, +, -, - (see the header): indices 0-1 agree with "strong", 2-3 flip it.
const std::vector<std::string> kVerbs{"beat", "outran", "feared", "trailed"};
const std::vector<std::string> kAdjectives{"strong", "fast", "weak", "slow"};

int sign(int64_t index) {
  return index < 2 ? 1 : -1;
}
int64_t noun_id(int64_t n) {
  return static_cast<int64_t>(kTemplate.size()) + n;
}
int64_t verb_id(int64_t v) {
  return noun_id(static_cast<int64_t>(kNouns.size())) + v;
}
int64_t adjective_id(int64_t a) {
  return verb_id(static_cast<int64_t>(kVerbs.size())) + a;
}

}  // namespace

int64_t winograd_vocabulary() {
  return adjective_id(static_cast<int64_t>(kAdjectives.size()));
}
int64_t winograd_nouns() {
  return static_cast<int64_t>(kNouns.size());
}

WinogradSet draw_winograd(int64_t n, Referent which, Generator& gen) {
  WinogradSet s{Tensor({n, kSentenceLength}), Tensor({n}), Tensor({n})};
  const int64_t nouns = winograd_nouns();
  for (int64_t r = 0; r < n; ++r) {
    const int64_t n1 = gen.randint(nouns);
    int64_t n2 = gen.randint(nouns - 1);
    n2 += n2 >= n1;  // any noun but n1
    const int64_t verb = gen.randint(4);
    int64_t adjective = gen.randint(4);
    const bool wanted_first = which == Referent::kFirst;
    if (which != Referent::kEither && (sign(verb) == sign(adjective)) != wanted_first)
      adjective = (adjective + 2) % 4;  // the same word's opposite: the other referent
    const bool names_first = sign(verb) == sign(adjective);
    const int64_t ids[kSentenceLength] = {0, noun_id(n1), verb_id(verb),          0, noun_id(n2), 1,
                                          2, 3,           adjective_id(adjective)};
    for (int64_t t = 0; t < kSentenceLength; ++t)
      s.ids[r * kSentenceLength + t] = static_cast<real>(ids[t]);
    s.labels[r] = static_cast<real>(names_first ? n1 : n2);
    s.first[r] = static_cast<real>(n1);
  }
  return s;
}

std::vector<std::string> winograd_words(const Tensor& ids, int64_t r) {
  std::vector<std::string> vocabulary = kTemplate;
  for (const auto* list : {&kNouns, &kVerbs, &kAdjectives})
    vocabulary.insert(vocabulary.end(), list->begin(), list->end());
  std::vector<std::string> words;
  for (int64_t t = 0; t < kSentenceLength; ++t)
    words.push_back(vocabulary.at(static_cast<size_t>(ids[r * kSentenceLength + t])));
  return words;
}

PronounModel::PronounModel(const train::options::ModelSettings& m, Generator& gen)
    : Module("PronounModel"), d_model_(m.d_model) {
  tok_ = register_module("tok",
                         std::make_shared<nn::Embedding>(winograd_vocabulary(), m.d_model, gen));
  pos_ = register_module(
      "pos", std::make_shared<nn::LearnedPositionalEmbedding>(kSentenceLength, m.d_model, gen));
  nn::TransformerLayerOptions o;
  o.d_model = m.d_model;
  o.nhead = m.nhead;
  o.dim_feedforward = m.dim_ff;
  o.dropout = 0;
  o.norm_first = true;
  layers_ =
      register_module("layers", std::make_shared<nn::ModuleList<nn::TransformerEncoderLayer>>());
  for (int64_t l = 0; l < m.num_layers; ++l)
    layers_->append(std::make_shared<nn::TransformerEncoderLayer>(o, gen));
  norm_ = register_module("norm", std::make_shared<nn::LayerNorm>(m.d_model));
  head_ =
      register_module("head", std::make_shared<nn::Linear>(m.d_model, winograd_nouns(), true, gen));
}

Var PronounModel::forward(const Tensor& ids) {
  Var x = pos_->forward(tok_->forward(ids));
  for (const auto& layer : *layers_) x = layer->forward(x);
  const Var it = reshape(slice(x, 1, kItAt, kItAt + 1), {ids.size(0), d_model_});  // (B,d)
  return head_->forward(norm_->forward(it));
}

ItRow PronounModel::it_row(int64_t layer, const Tensor& ids) {
  NoGrad off;
  forward(ids);
  const Tensor& w = (*layers_)[static_cast<size_t>(layer)].self_attn->last_weights();  // (B,H,T,T)
  const int64_t rows = w.size(0) * w.size(1), t = kSentenceLength;
  ItRow r;
  r.row.assign(static_cast<size_t>(t), 0.0);
  for (int64_t bh = 0; bh < rows; ++bh)
    for (int64_t k = 0; k < t; ++k)
      r.row[static_cast<size_t>(k)] += w[(bh * t + kItAt) * t + k] / static_cast<double>(rows);
  r.first = r.row[kFirstNounAt];
  r.second = r.row[kSecondNounAt];
  return r;
}

}  // namespace attn::experiments
