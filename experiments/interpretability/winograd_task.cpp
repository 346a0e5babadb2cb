#include "experiments/interpretability/winograd_task.h"

#include <string>

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
    : PositionReadout("PronounModel",
                      m,
                      {.vocabulary = winograd_vocabulary(),
                       .length = kSentenceLength,
                       .read_at = kItAt,
                       .classes = winograd_nouns()},
                      gen) {}

std::vector<double> PronounModel::it_row(int64_t layer, const Tensor& ids) {
  const Tensor rows = attention_rows(layer, ids);  // (B,9), heads averaged
  const int64_t batch = rows.size(0), t = kSentenceLength;
  std::vector<double> row(static_cast<size_t>(t), 0.0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t k = 0; k < t; ++k)
      row[static_cast<size_t>(k)] += rows[b * t + k] / static_cast<double>(batch);
  return row;
}

}  // namespace attn::experiments
