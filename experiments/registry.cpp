#include "experiments/registry.h"

#include <regex>
#include <set>

#include "autograd/error.h"
#include "experiments/measured_times.h"
#include "train/options/suggest.h"

namespace attn::experiments {

// ---- THE TABLE ------------------------------------------------------------------------------
// One line per experiment: X(function). The function lives in experiments/<something>.cpp,
// returns an Experiment, and is declared and called by the two expansions below. To add an
// experiment, write its file and add its line here (docs/adding-an-experiment.md).
#define ATTN_EXPERIMENT_TABLE(X) \
  X(demo)                        \
  X(bag_of_tokens)               \
  X(worked_example)              \
  X(cat_sat_mat)                 \
  X(identity_lookup)             \
  X(memory_wall)                 \
  X(attention_heatmap)           \
  X(attention_matrix)            \
  X(anagrams)                    \
  X(query_bars)                  \
  X(mha_heads)                   \
  X(causal_mask)                 \
  X(attention_flops)             \
  X(two_relation)                \
  X(recurrent_baselines)         \
  X(reversal_no_positions)       \
  X(vanishing_gradient)          \
  X(rnn_vs_attention)            \
  X(linear_attention)            \
  X(reversal)                    \
  X(parameter_share)             \
  X(qkv_identity)                \
  X(scaling_variance)            \
  X(softmax_dispersion)          \
  X(softmax_variants)            \
  X(linear_vs_softmax_recall)    \
  X(sinusoid_shift)              \
  X(rope_relative)               \
  X(gpt_bert_encdec)             \
  X(bert_finetune)               \
  X(head_ablation)               \
  X(attention_shuffle)           \
  X(winograd_shortcut)           \
  X(context_bank)                \
  X(ffn_memory)                  \
  X(additive_vs_dot)             \
  X(pre_post_norm)               \
  X(ablate_block)                \
  X(hopfield_capacity)           \
  X(depth_hops)                  \
  X(length_extrapolation)        \
  X(norms_angles)                \
  X(mqa_gqa)                     \
  X(sparse_challenge)            \
  X(attention_zoo)               \
  X(linear_zoo)                  \
  X(attention_rank)              \
  X(ring_attention)              \
  X(titans_memory)               \
  X(svf_finetune)                \
  X(vit_patches)                 \
  X(scaling_law)                 \
  X(emergence)                   \
  X(selective_ssm)               \
  X(triangle_tradeoff)
// ---------------------------------------------------------------------------------------------

#define ATTN_DECLARE(fn) Experiment fn();
ATTN_EXPERIMENT_TABLE(ATTN_DECLARE)
#undef ATTN_DECLARE

namespace {

// A declared nondeterminism names its reason and at least one key, each a valid pattern: a
// typo here would silently exempt nothing (or everything) from the determinism test.
void check_nondeterminism(const Experiment& e) {
  const Nondeterminism& n = e.nondeterministic;
  if (n.reason.empty() != n.keys.empty())
    throw Error("experiment registry: '" + e.name +
                "' nondeterministic needs both a reason and the keys that vary");
  for (const auto& key : n.keys) {
    try {
      std::regex pattern(key);
    } catch (const std::regex_error& err) {
      throw Error("experiment registry: '" + e.name + "' nondeterministic key '" + key +
                  "' is not a regular expression: " + err.what());
    }
  }
}

std::vector<Experiment> build_table() {
  std::vector<Experiment> table;
#define ATTN_ADD(fn) table.push_back(fn());
  ATTN_EXPERIMENT_TABLE(ATTN_ADD)
#undef ATTN_ADD
  std::set<std::string> seen;
  for (auto& e : table) {
    if (e.name.empty() || !e.run) throw Error("experiment registry: an entry has no name or run");
    if (!seen.insert(e.name).second)
      throw Error("experiment registry: two experiments are named '" + e.name + "'");
    check_nondeterminism(e);
    if (!e.config.has("seed")) add_seed_field(e.config);
    // The time `attnlab list` shows is measured, never written by hand (measured_times.h).
    const auto seconds = measured_seconds(e.name);
    e.typical_time = seconds ? time_text(*seconds) : "not measured";
  }
  return table;
}

}  // namespace

const std::vector<Experiment>& all_experiments() {
  static const std::vector<Experiment> table = build_table();
  return table;
}

std::vector<std::string> experiment_names() {
  std::vector<std::string> names;
  for (const auto& e : all_experiments()) names.push_back(e.name);
  return names;
}

const Experiment& find_experiment(const std::string& name) {
  for (const auto& e : all_experiments())
    if (e.name == name) return e;
  throw UsageError("unknown experiment '" + name + "'." +
                   train::options::did_you_mean(name, experiment_names()) +
                   " (`attnlab list` shows them all)");
}

}  // namespace attn::experiments
