#include "experiments/interpretability/context_bank_task.h"

#include <utility>

namespace attn::experiments {

namespace {

const std::vector<std::string> kFillers{"the", "we", "saw", "by", "old", "a", "was", "near"};
const std::vector<std::string> kRiverWords{"river", "water", "fish", "boat",
                                           "shore", "reeds", "mud",  "swim"};
const std::vector<std::string> kMoneyWords{"money", "loan", "cash",    "teller",
                                           "vault", "coin", "deposit", "credit"};
const int64_t kPerSense = static_cast<int64_t>(kRiverWords.size());
const int64_t kFillerCount = static_cast<int64_t>(kFillers.size());

// Ids: 0 "bank", then the fillers, the river words, the money words.
int64_t filler_id(int64_t f) {
  return 1 + f;
}
int64_t sense_word_id(int64_t sense, int64_t w) {
  return 1 + kFillerCount + sense * kPerSense + w;
}

}  // namespace

int64_t bank_vocabulary() {
  return sense_word_id(2, 0);
}
int64_t bank_words_per_sense() {
  return kPerSense;
}

BankSet draw_bank(int64_t n, Generator& gen) {
  BankSet s{Tensor({n, kBankLength}), Tensor({n}), Tensor({n})};
  for (int64_t r = 0; r < n; ++r) {
    const int64_t sense = r % 2;
    // Three distinct words of the sense: two in the sentence, the third the label.
    int64_t picked[3];
    for (int64_t i = 0; i < 3; ++i) {
      bool fresh = false;
      while (!fresh) {
        picked[i] = gen.randint(kPerSense);
        fresh = true;
        for (int64_t j = 0; j < i; ++j) fresh = fresh && picked[j] != picked[i];
      }
    }
    std::vector<int64_t> context{sense_word_id(sense, picked[0]), sense_word_id(sense, picked[1]),
                                 sense_word_id(1 - sense, gen.randint(kPerSense))};
    while (static_cast<int64_t>(context.size()) < kBankLength - 1)
      context.push_back(filler_id(gen.randint(kFillerCount)));
    for (int64_t i = static_cast<int64_t>(context.size()) - 1; i > 0; --i)  // Fisher-Yates
      std::swap(context[static_cast<size_t>(i)], context[static_cast<size_t>(gen.randint(i + 1))]);
    context.insert(context.begin() + kBankAt, 0);  // "bank"
    for (int64_t t = 0; t < kBankLength; ++t)
      s.ids[r * kBankLength + t] = static_cast<real>(context[static_cast<size_t>(t)]);
    s.labels[r] = static_cast<real>(sense * kPerSense + picked[2]);
    s.sense[r] = static_cast<real>(sense);
  }
  return s;
}

WordKind bank_word_kind(real id) {
  const auto i = static_cast<int64_t>(id);
  if (i == 0) return WordKind::kBank;
  if (i < sense_word_id(0, 0)) return WordKind::kFiller;
  return i < sense_word_id(1, 0) ? WordKind::kRiver : WordKind::kMoney;
}

std::vector<std::string> bank_words(const Tensor& ids, int64_t r) {
  std::vector<std::string> vocabulary{"bank"};
  for (const auto* list : {&kFillers, &kRiverWords, &kMoneyWords})
    vocabulary.insert(vocabulary.end(), list->begin(), list->end());
  std::vector<std::string> words;
  for (int64_t t = 0; t < kBankLength; ++t)
    words.push_back(vocabulary.at(static_cast<size_t>(ids[r * kBankLength + t])));
  return words;
}

}  // namespace attn::experiments
