// The table of every experiment.
//
//   for (const auto& e : attn::experiments::all_experiments()) fmt::print("{}\n", e.name);
//   const attn::experiments::Experiment& e = attn::experiments::find_experiment("anagrams");  //
//   UsageError if unknown
//
// The table itself is the list in registry.cpp: one line per experiment.
#pragma once

#include <string>
#include <vector>

#include "experiments/experiment.h"

namespace attn::experiments {

// Every registered experiment, in table order, each with a "seed" config field.
const std::vector<Experiment>& all_experiments();
// Throws attn::UsageError naming the closest experiment names when `name` is unknown.
const Experiment& find_experiment(const std::string& name);
std::vector<std::string> experiment_names();

}  // namespace attn::experiments
