// Closest-name suggestions for error messages ("did you mean --d-model?").
//
//   attn::experiments::edit_distance("d_modle", "d_model");                  // 2
//   attn::experiments::closest_names("anagram", {"anagrams", "mha-heads"});   // {"anagrams"}
//   attn::experiments::did_you_mean("anagram", names);   // " Did you mean 'anagrams'?" or the full
//   list
#pragma once

#include <string>
#include <vector>

namespace attn::experiments {

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

}  // namespace attn::experiments
