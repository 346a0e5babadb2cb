// The one suggestion engine (train/options/suggest.h): edit distance and the closest names that
// every "did you mean" of attnlab is built from.
#include <doctest/doctest.h>

#include "train/options/suggest.h"

namespace attn::train::options {

TEST_SUITE("options") {
  TEST_CASE("suggest: edit distance and closest names") {
    CHECK(edit_distance("kitten", "sitting") == 3);
    CHECK(edit_distance("", "abc") == 3);
    CHECK(edit_distance("Anagrams", "anagrams") == 0);
    const std::vector<std::string> names{"worked-example", "anagrams", "mha-heads", "memory-wall"};
    CHECK(closest_names("anagram", names) == std::vector<std::string>{"anagrams"});
    CHECK(closest_names("memory", names) == std::vector<std::string>{"memory-wall"});
    CHECK(closest_names("zzzzzz", names).empty());
    CHECK(did_you_mean("zzzzzz", names).find("Valid names: worked-example, anagrams") !=
          std::string::npos);
  }

  TEST_CASE("suggest: the renamed fields lead from the old spelling to the new one") {
    const std::vector<std::string> fields{"d_model",    "nhead", "num_layers", "dim_ff",
                                          "batch_size", "lr",    "steps",      "seed"};
    CHECK(did_you_mean("layers", fields, "--") == " Did you mean --num_layers?");
    CHECK(did_you_mean("batch", fields, "--") == " Did you mean --batch_size?");
    CHECK(did_you_mean("d_modle", fields, "--") == " Did you mean --d_model?");
    CHECK(did_you_mean("nheads", fields, "--") == " Did you mean --nhead?");
    // Closest first, ties in the order given.
    CHECK(closest_names("step", {"steps", "seed"}) == std::vector<std::string>{"steps", "seed"});
  }
}

}  // namespace attn::train::options
