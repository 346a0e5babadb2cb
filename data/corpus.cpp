#include "data/corpus.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "autograd/error.h"
#include "data/utf8.h"

namespace attn::data {

namespace {
using Words = std::vector<const char*>;
const Words kDet = {"the", "a", "one", "every", "that"};
const Words kAdj = {"quiet", "red", "old", "small", "bright", "lazy", "clever", "green"};
const Words kNoun = {"fox",    "kite", "river", "teacher", "robot",
                     "garden", "cat",  "lamp",  "child",   "boat"};
const Words kVerb = {"watches", "follows", "finds", "paints", "hears", "carries", "likes"};
const Words kPrep = {"near", "under", "behind", "beside", "above"};

const char* pick(const Words& w, Generator& gen) {
  return w[static_cast<size_t>(gen.randint(static_cast<int64_t>(w.size())))];
}

// noun phrase: det [adj] noun
std::string noun_phrase(Generator& gen) {
  std::string np = pick(kDet, gen);
  if (gen.uniform() < 0.5) np += std::string(" ") + pick(kAdj, gen);
  return np + " " + pick(kNoun, gen);
}
}  // namespace

std::string toy_grammar_text(int64_t num_sentences, uint64_t seed) {
  require_at_least("toy_grammar_text", "num_sentences", num_sentences, 1);
  Generator gen(seed);
  std::string text;
  for (int64_t i = 0; i < num_sentences; ++i) {
    // sentence: NP verb NP [prep NP] .
    std::string s = noun_phrase(gen) + " " + pick(kVerb, gen) + " " + noun_phrase(gen);
    if (gen.uniform() < 0.4) s += std::string(" ") + pick(kPrep, gen) + " " + noun_phrase(gen);
    text += s + ".\n";
  }
  return text;
}

std::string load_text_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw Error(fmt::format("text file '{}' cannot be opened: {}", path, std::strerror(errno)));
  if (S_ISDIR(st.st_mode))
    throw Error(fmt::format("text file '{}' is a directory, not a file", path));
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(fmt::format("text file '{}' cannot be read: {}", path, std::strerror(errno)));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw Error(fmt::format("text file '{}': reading failed", path));
  std::string text = ss.str();
  if (text.empty()) throw Error(fmt::format("text file '{}' is empty", path));
  utf8_chars(text, "text file '" + path + "'");  // validates, naming the byte offset
  return text;
}

CharCorpus::CharCorpus(const std::string& text, double val_fraction)
    : tokenizer_(Tokenizer::chars_of(text.empty() ? " " : text)) {
  if (text.empty()) throw Error("CharCorpus: text is empty");
  if (!(val_fraction >= 0.0 && val_fraction <= 0.5))
    throw Error(fmt::format("CharCorpus: val_fraction must be in [0, 0.5], got {}", val_fraction));
  std::vector<int64_t> ids = tokenizer_.encode(text);
  const auto n_train = static_cast<int64_t>(static_cast<double>(ids.size()) * (1.0 - val_fraction));
  train_.assign(ids.begin(), ids.begin() + n_train);
  val_.assign(ids.begin() + n_train, ids.end());
}

LanguageModelTask::LanguageModelTask(const CharCorpus& corpus, int64_t block_len, Split split)
    : tokenizer_(corpus.tokenizer()),
      ids_(std::make_shared<const std::vector<int64_t>>(split == Split::kTrain ? corpus.train_ids()
                                                                               : corpus.val_ids())),
      block_len_(block_len) {
  require_at_least(name(), "block_len", block_len, 1);
  const auto n = static_cast<int64_t>(ids_->size());
  if (n < block_len + 1)
    throw Error(fmt::format("charlm: the {} split has {} characters, fewer than block_len + 1 = {}",
                            split == Split::kTrain ? "training" : "validation", n, block_len + 1));
}

Example LanguageModelTask::window(int64_t start) const {
  Example ex;
  auto first = ids_->begin() + start;
  ex.src.assign(first, first + block_len_);
  ex.tgt.assign(first + 1, first + block_len_ + 1);
  return ex;
}

Example LanguageModelTask::sample(Generator& gen) const {
  return window(gen.randint(static_cast<int64_t>(ids_->size()) - block_len_));
}

std::vector<Example> LanguageModelTask::all_windows() const {
  std::vector<Example> out;
  for (int64_t s = 0; s + block_len_ + 1 <= static_cast<int64_t>(ids_->size()); s += block_len_)
    out.push_back(window(s));
  return out;
}

}  // namespace attn::data
