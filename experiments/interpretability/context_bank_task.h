// The toy task of context-bank (000, "dynamic topology"): one ambiguous word, "bank", among
// context words of a river sense or a money sense, and a readout at "bank" that needs the sense.
//
//   Generator gen(1);
//   BankSet s = draw_bank(400, gen);          // ids (400,8), labels (400), sense (400)
//   bank_words(s.ids, 0);                     // {"we", "fish", "old", "bank", "coin", ...}
//   WordKind k = bank_word_kind(s.ids[5]);    // kRiver, kMoney, kFiller or kBank
//
// A sentence is eight words with "bank" always at position 3; the other seven positions hold,
// shuffled, two distinct words of the sentence's sense, one word of the other sense (so no
// single context word decides: the sense is the majority, two against one) and four fillers.
// The label is a third word of the sentence's sense that is not in the sentence (one of six):
// the word a model reading at "bank" should expect next to it. Its sense is the sentence's, so
// a readout that predicts the right sense scores 1 and one that guesses it 0.5; the word itself
// is a guess among six (1/6 at best). Sentence r has sense r % 2 (0 river, 1 money): any even
// count of rows is balanced exactly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "autograd/generator.h"
#include "autograd/tensor.h"

namespace attn::experiments {

constexpr int64_t kBankAt = 3, kBankLength = 8;

enum class WordKind { kBank, kFiller, kRiver, kMoney };

struct BankSet {
  Tensor ids;     // (n, 8) token ids
  Tensor labels;  // (n) the expected word: sense * words_per_sense + its index in the sense
  Tensor sense;   // (n) 0 river, 1 money
};

int64_t bank_vocabulary();       // "bank", the fillers, the river words, the money words
int64_t bank_words_per_sense();  // the readout has 2 x this many classes
BankSet draw_bank(int64_t n, Generator& gen);
WordKind bank_word_kind(real id);
std::vector<std::string> bank_words(const Tensor& ids, int64_t r);

}  // namespace attn::experiments
