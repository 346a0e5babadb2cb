// Closest-name suggestions for error messages: the one suggestion engine of `attnlab run`,
// `attnlab train` and the experiment registry.
//
//   using namespace attn::train::options;
//   edit_distance("d_modle", "d_model");                  // 2
//   closest_names("anagram", {"anagrams", "mha-heads"});  // {"anagrams"}
//   did_you_mean("anagram", names);      // " Did you mean anagrams?", or " Valid names: ..."
//   did_you_mean("d_modle", fields, "--");               // " Did you mean --d_model?"
#pragma once

#include <string>
#include <vector>

namespace attn::train::options {

// Levenshtein distance (insertions, deletions, substitutions each cost 1), case-insensitive.
int edit_distance(const std::string& a, const std::string& b);

// The candidates nearest to `word`, best first: every candidate within a distance of
// max(2, |word|/3), or that contains `word` (or is contained in it).
std::vector<std::string> closest_names(const std::string& word,
                                       const std::vector<std::string>& candidates);

// A sentence for an error message: the close matches if any, else all valid names.
// `prefix` is put before each name (e.g. "--").
std::string did_you_mean(const std::string& word,
                         const std::vector<std::string>& candidates,
                         const std::string& prefix = "");

}  // namespace attn::train::options
