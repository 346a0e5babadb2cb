// The toy coreference task of winograd-shortcut (000 §X) and the small transformer that solves
// it: which noun does "it" name in "the N1 V the N2 because it was ADJ"?
//
//   Generator gen(1);
//   WinogradSet s = draw_winograd(500, Referent::kSecond, gen);  // ids (500,9), labels (500)
//   PronounModel m(read_model(cfg), gen);
//   Var logits = m.forward(s.ids);                        // (500, nouns): the named noun
//   std::vector<double> row = m.it_row(0, s.ids);         // layer 0's row from "it"
//
// The answer is a verb-adjective rule, a toy Winograd schema: every verb and every adjective
// has a sign, and "it" is the subject (N1) when the signs agree, the object (N2) otherwise.
//   beat, outran (+): the subject has the strong/fast side    "the fox beat the owl because
//   feared, trailed (-): the object has it                     it was strong" -> fox
//   strong, fast (+), weak, slow (-)                           "... feared ... strong" -> owl
// So the referent depends on two words jointly (their product), and its identity must be fetched
// from position 1 or 4: the model attends from "it" to the noun it names. The label is that
// noun's index among the nouns (drawn at random, N1 != N2), so no answer can be memorised.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "autograd/generator.h"
#include "experiments/interpretability/position_readout.h"
#include "train/options/groups.h"

namespace attn::experiments {

// The positions of the template "the N1 V the N2 because it was ADJ".
constexpr int64_t kFirstNounAt = 1, kSecondNounAt = 4, kItAt = 6, kSentenceLength = 9;

// Which sentences a set holds: "it" names the first noun, the second, or either (half each).
enum class Referent { kFirst, kSecond, kEither };

struct WinogradSet {
  Tensor ids;     // (n, 9) token ids
  Tensor labels;  // (n) the named noun's index among the nouns
  Tensor first;   // (n) the first noun's index (to count answers that name it)
};

int64_t winograd_vocabulary();  // tokens of the template words, nouns, verbs and adjectives
int64_t winograd_nouns();       // the answer classes
WinogradSet draw_winograd(int64_t n, Referent which, Generator& gen);
// The sentence of row r of `ids` as words.
std::vector<std::string> winograd_words(const Tensor& ids, int64_t r);

// ids (B,9) -> logits (B, nouns): the shared PositionReadout encoder (position_readout.h) read
// at the position of "it".
class PronounModel : public PositionReadout {
 public:
  PronounModel(const train::options::ModelSettings& m, Generator& gen);
  // Runs the model on ids (no gradient) and reads layer `layer`'s attention row from "it" over
  // the 9 positions, averaged over heads and sentences.
  std::vector<double> it_row(int64_t layer, const Tensor& ids);
};

}  // namespace attn::experiments
