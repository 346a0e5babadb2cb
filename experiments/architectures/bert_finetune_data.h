// The data of bert-finetune: the built-in toy-grammar corpus (data/corpus.h) read as word-level
// sentences, sentence pairs for next-sentence prediction, and a small classification task.
//
//   SentencePool pool(4000, /*seed=*/7);                 // 90% of the sentences train, 10% not
//   Batch nsp = pool.draw_pairs(64, Part::kTrain, gen);  // [CLS] A [SEP] B [SEP], label 1/0
//                                                        // (each sentence padded to a slot)
//   Batch cls = pool.draw_sentences(64, Part::kHeldOut, gen);  // [CLS] S [SEP], label 1/0
//
// Next sentence. The corpus's lines are independent draws from the grammar, so two adjacent
// lines share nothing a model could use. The pool therefore reads the corpus as stories about
// one protagonist: a sentence's next sentence is one with the same subject noun ("the fox
// watches a kite." -> "a quiet fox finds the river."), as a text keeps talking about whom it is
// about. A pair is such a continuation half of the time (label 1) and a random sentence of the
// same part otherwise (label 0, BERT's 50/50 rule); a random sentence shares the subject by chance
// one time in the number of nouns, so the best possible accuracy is 1 - 0.5 / nouns, not 1.
//
// The classification task: does the verb's object carry an adjective ("... watches a red kite")?
// The label is read off the grammar's shape, so it needs word classes (which words are
// adjectives) and roles (which noun phrase follows the verb): what masked-LM pre-training learns.
//
// Word classes come from the corpus itself: a noun is a word that ends some sentence (every
// sentence ends on a noun), the subject is the first noun, the verb follows it.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <vector>

#include "autograd/generator.h"
#include "autograd/tensor.h"
#include "data/tokenizer.h"

namespace attn::experiments::bert_pretrain {

struct Sentence {
  std::vector<int64_t> words;  // token ids, the final "." included
  int64_t subject = 0;         // the id of its first noun
  bool object_adjective = false;
};

struct Batch {
  Tensor ids;     // (B,T) [CLS] ... [SEP] padded with PAD (CLS is data::kBos)
  Tensor labels;  // (B) 0 or 1
};

enum class Part { kTrain, kHeldOut };

class SentencePool {
 public:
  // Throws attn::Error when a noun is the subject of no sentence of a part (too few sentences
  // for next-sentence pairs).
  SentencePool(int64_t num_sentences, uint64_t seed);

  const data::Tokenizer& tokenizer() const { return *tokenizer_; }
  int64_t vocab_size() const { return tokenizer_->vocab_size(); }
  int64_t nouns() const { return static_cast<int64_t>(nouns_.size()); }
  // [CLS] A [SEP] B [SEP] and [CLS] S [SEP], each sentence in a slot of the longest's length.
  int64_t pair_length() const { return 2 * longest_ + 3; }
  int64_t single_length() const { return longest_ + 2; }
  const std::vector<Sentence>& part(Part p) const { return p == Part::kTrain ? train_ : held_; }

  // n next-sentence pairs from one part: a continuation (label 1) or a random sentence (0).
  Batch draw_pairs(int64_t n, Part p, Generator& gen) const;
  // n sentences of one part, labelled with object_adjective.
  Batch draw_sentences(int64_t n, Part p, Generator& gen) const;
  // The given sentences, labelled with object_adjective.
  Batch sentences(const std::vector<Sentence>& chosen) const;

 private:
  // The sentences of part p whose subject is `noun`.
  const std::vector<size_t>& followers(Part p, int64_t noun) const;
  std::unique_ptr<data::Tokenizer> tokenizer_;  // made from the corpus's words
  std::set<int64_t> nouns_;
  std::vector<Sentence> train_, held_;
  std::vector<std::vector<size_t>> train_by_subject_, held_by_subject_;  // by noun id
  int64_t longest_ = 0;
};

}  // namespace attn::experiments::bert_pretrain
