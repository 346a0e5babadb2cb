#include "data/tasks/anagram.h"

#include <fmt/format.h>

#include <algorithm>

#include "autograd/error.h"

namespace attn::data {

namespace {
const std::vector<std::string> kAnimals = {"cat", "dog", "bird", "fox", "cow", "owl"};
const std::vector<std::string> kVerbs = {"sat", "slept", "stood", "sang", "ran", "hid"};
const std::vector<std::string> kPreps = {"on", "under", "near", "by", "behind"};
const std::vector<std::string> kObjects = {"mat", "rug", "box", "bed", "log", "hill"};

std::vector<std::string> all_words() {
  std::vector<std::string> w{"the"};
  for (const auto* list : {&kAnimals, &kVerbs, &kPreps, &kObjects})
    w.insert(w.end(), list->begin(), list->end());
  return w;
}

const std::string& pick(const std::vector<std::string>& list, Generator& gen) {
  return list[static_cast<size_t>(gen.randint(static_cast<int64_t>(list.size())))];
}
}  // namespace

AnagramTask::AnagramTask(Config config)
    : config_(config), tokenizer_(Tokenizer::words(all_words())) {
  if (!(config_.shuffled_fraction >= 0.0 && config_.shuffled_fraction <= 1.0))
    throw Error(fmt::format("anagram: shuffled_fraction must be in [0, 1], got {}",
                            config_.shuffled_fraction));
}

std::vector<std::vector<std::string>> AnagramTask::slots() {
  return {{"the"}, kAnimals, kVerbs, kPreps, {"the"}, kObjects};
}

std::vector<std::string> AnagramTask::random_sentence(Generator& gen) const {
  std::vector<std::string> words;
  for (const auto& slot : slots()) words.push_back(pick(slot, gen));
  return words;
}

Example AnagramTask::sample(Generator& gen) const {
  std::vector<int64_t> ids;
  for (const auto& w : random_sentence(gen)) ids.push_back(tokenizer_.vocab().id(w));
  Example ex;
  ex.label = 1;
  if (gen.uniform() < config_.shuffled_fraction) {
    // Redraw until the order differs from the original (a sentence always has at least two
    // distinct words, so this ends quickly).
    std::vector<int64_t> perm = ids;
    do shuffle(perm, gen);
    while (perm == ids);
    ids = perm;
    ex.label = 0;
  }
  ex.src = ids;
  return ex;
}

std::vector<std::string> anagram_demo_sentences() {
  return {"the cat sat on the mat", "the mat sat on the cat", "mat the on sat cat the"};
}

}  // namespace attn::data
