// Character corpora: the toy grammar, loading files (with clear errors), LM windows.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "autograd/error.h"
#include "data/corpus.h"
#include "tests/scratch_dir.h"

namespace attn::data {

namespace {
std::string temp_path(const std::string& name) {
  static const std::filesystem::path dir = attn::testing::scratch_dir("corpus");
  return (dir / name).string();
}

void write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}
}  // namespace

TEST_SUITE("data") {
  TEST_CASE("toy grammar text is deterministic per seed and sentence-shaped") {
    const std::string a = toy_grammar_text(50, 1);
    CHECK(a == toy_grammar_text(50, 1));
    CHECK(a != toy_grammar_text(50, 2));
    CHECK(std::count(a.begin(), a.end(), '\n') == 50);
    CHECK(a.find(".\n") != std::string::npos);
  }

  TEST_CASE("loading a text file: contents, and clear errors for bad files") {
    const std::string ok = temp_path("ok.txt");
    write(ok, "caf\xC3\xA9\n");
    CHECK(load_text_file(ok) == "caf\xC3\xA9\n");
    const std::string empty = temp_path("empty.txt");
    write(empty, "");
    CHECK_THROWS_WITH_AS(load_text_file(empty), doctest::Contains("is empty"), Error);
    CHECK_THROWS_WITH_AS(load_text_file(temp_path("missing.txt")),
                         doctest::Contains("No such file"), Error);
    CHECK_THROWS_WITH_AS(load_text_file(std::filesystem::temp_directory_path().string()),
                         doctest::Contains("is a directory"), Error);
    const std::string bad = temp_path("bad.txt");
    write(bad, "ok\xFF");
    CHECK_THROWS_WITH_AS(load_text_file(bad), doctest::Contains("not valid UTF-8 at byte 2"),
                         Error);
  }

  TEST_CASE("char corpus splits by position; LM windows are shifted by one") {
    CharCorpus corpus(toy_grammar_text(200, 0), 0.1);
    const auto total = corpus.train_ids().size() + corpus.val_ids().size();
    CHECK(corpus.val_ids().size() == total - static_cast<size_t>(0.9 * static_cast<double>(total)));
    LanguageModelTask train(corpus, 16, Split::kTrain);
    Generator gen(0);
    for (int i = 0; i < 20; ++i) {
      Example ex = train.sample(gen);
      REQUIRE(ex.src.size() == 16);
      CHECK(std::equal(ex.src.begin() + 1, ex.src.end(), ex.tgt.begin()));
    }
    LanguageModelTask val(corpus, 16, Split::kValidation);
    auto windows = val.all_windows();
    CHECK(windows.size() == (corpus.val_ids().size() - 1) / 16);
    CHECK(windows[1].src[0] == corpus.val_ids()[16]);
    CHECK_THROWS_WITH_AS(LanguageModelTask(corpus, 0, Split::kTrain),
                         "charlm: block_len must be >= 1, got 0", Error);
    CHECK_THROWS_WITH_AS(LanguageModelTask(CharCorpus("abc", 0.0), 8, Split::kTrain),
                         doctest::Contains("fewer than block_len + 1"), Error);
    CHECK_THROWS_WITH_AS(CharCorpus("", 0.1), doctest::Contains("empty"), Error);
  }
}

}  // namespace attn::data
