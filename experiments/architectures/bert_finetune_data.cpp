#include "experiments/architectures/bert_finetune_data.h"

#include <fmt/format.h>

#include <sstream>
#include <string>

#include "autograd/error.h"
#include "data/corpus.h"

namespace attn::experiments::bert_pretrain {

namespace {

using Words = std::vector<std::string>;

// The corpus's lines as words, the final "." a word of its own.
std::vector<Words> split_sentences(const std::string& text) {
  std::vector<Words> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line.back() != '.') continue;
    line.pop_back();
    Words w;
    std::istringstream words(line);
    for (std::string word; words >> word;) w.push_back(word);
    w.emplace_back(".");
    out.push_back(std::move(w));
  }
  return out;
}

data::Tokenizer tokenizer_of(const std::vector<Words>& sentences) {
  std::set<std::string> distinct;  // sorted: the ids do not depend on the order of the lines
  for (const Words& s : sentences) distinct.insert(s.begin(), s.end());
  return data::Tokenizer::words({distinct.begin(), distinct.end()});
}

// Row `row` of ids: [CLS] first [SEP] (second [SEP]), each sentence in a slot of `slot` words,
// padded where it is shorter. The fixed slots tell every position which sentence it belongs to
// (what BERT's segment embeddings do); padding is hidden from attention wherever it stands.
void write_row(Tensor& ids,
               int64_t row,
               int64_t length,
               int64_t slot,
               const std::vector<const Sentence*>& parts) {
  int64_t at = row * length;
  ids[at] = static_cast<real>(data::kBos);
  for (const Sentence* s : parts) {
    for (size_t i = 0; i < s->words.size(); ++i)
      ids[at + 1 + static_cast<int64_t>(i)] = static_cast<real>(s->words[i]);
    at += slot + 1;
    ids[at] = static_cast<real>(data::kSep);
  }
  // The rest stays zero, which is data::kPad (Tensor({B,T}) starts at zero).
}

}  // namespace

SentencePool::SentencePool(int64_t num_sentences, uint64_t seed) {
  const std::vector<Words> words = split_sentences(data::toy_grammar_text(num_sentences, seed));
  tokenizer_ = std::make_unique<data::Tokenizer>(tokenizer_of(words));
  const data::Vocab& vocab = tokenizer_->vocab();
  for (const Words& s : words) nouns_.insert(vocab.id(s[s.size() - 2]));
  const auto held_from = static_cast<size_t>(0.9 * static_cast<double>(words.size()));
  for (size_t i = 0; i < words.size(); ++i) {
    Sentence s;
    for (const std::string& w : words[i]) s.words.push_back(vocab.id(w));
    size_t subject = 0;
    while (!nouns_.count(s.words[subject])) ++subject;  // the grammar puts a noun in every NP
    s.subject = s.words[subject];
    // NP verb det [adj] noun: the word two after the verb is an adjective unless it is a noun.
    s.object_adjective = !nouns_.count(s.words[subject + 3]);
    longest_ = std::max(longest_, static_cast<int64_t>(s.words.size()));
    (i < held_from ? train_ : held_).push_back(std::move(s));
  }
  for (Part p : {Part::kTrain, Part::kHeldOut}) {
    auto& index = p == Part::kTrain ? train_by_subject_ : held_by_subject_;
    index.assign(static_cast<size_t>(vocab_size()), {});
    const std::vector<Sentence>& all = part(p);
    for (size_t i = 0; i < all.size(); ++i) index[static_cast<size_t>(all[i].subject)].push_back(i);
    for (int64_t noun : nouns_)
      if (index[static_cast<size_t>(noun)].empty())
        throw Error(fmt::format(
            "bert-finetune: no {} sentence has the subject \"{}\"; {} sentences are too few for "
            "next-sentence pairs",
            p == Part::kTrain ? "training" : "held-out", vocab.token(noun), num_sentences));
  }
}

const std::vector<size_t>& SentencePool::followers(Part p, int64_t noun) const {
  return (p == Part::kTrain ? train_by_subject_ : held_by_subject_)[static_cast<size_t>(noun)];
}

Batch SentencePool::draw_pairs(int64_t n, Part p, Generator& gen) const {
  const std::vector<Sentence>& all = part(p);
  const auto count = static_cast<int64_t>(all.size());
  Batch b{Tensor({n, pair_length()}), Tensor({n})};
  for (int64_t r = 0; r < n; ++r) {
    const Sentence& first = all[static_cast<size_t>(gen.randint(count))];
    const bool next = gen.uniform() < 0.5;
    const std::vector<size_t>& f = followers(p, first.subject);
    const size_t second = next ? f[static_cast<size_t>(gen.randint(static_cast<int64_t>(f.size())))]
                               : static_cast<size_t>(gen.randint(count));
    write_row(b.ids, r, pair_length(), longest_, {&first, &all[second]});
    b.labels[r] = next ? 1 : 0;
  }
  return b;
}

Batch SentencePool::draw_sentences(int64_t n, Part p, Generator& gen) const {
  const std::vector<Sentence>& all = part(p);
  std::vector<Sentence> chosen;
  for (int64_t r = 0; r < n; ++r)
    chosen.push_back(all[static_cast<size_t>(gen.randint(static_cast<int64_t>(all.size())))]);
  return sentences(chosen);
}

Batch SentencePool::sentences(const std::vector<Sentence>& chosen) const {
  const auto n = static_cast<int64_t>(chosen.size());
  Batch b{Tensor({n, single_length()}), Tensor({n})};
  for (int64_t r = 0; r < n; ++r) {
    write_row(b.ids, r, single_length(), longest_, {&chosen[static_cast<size_t>(r)]});
    b.labels[r] = chosen[static_cast<size_t>(r)].object_adjective ? 1 : 0;
  }
  return b;
}

}  // namespace attn::experiments::bert_pretrain
