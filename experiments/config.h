// The options system (train/options/) as the experiments see it: the experiments live in
// attn::experiments and name these types unqualified (Config, Range, ...). The group functions
// (add_model_fields, read_optimizer, ...) are found through their Config argument.
//
//   Experiment e;
//   add_model_fields(e.config, {.d_model = 64, .nhead = 4, .num_layers = 2});
//   e.config.add_int("pairs", 8, "key-value pairs per sequence", {.min = 1});
#pragma once

#include "train/options/config.h"
#include "train/options/groups.h"

namespace attn::experiments {

using train::options::Config;
using train::options::Field;
using train::options::FieldType;
using train::options::FieldValue;
using train::options::format_value;
using train::options::Range;
using train::options::require_divides;
using train::options::type_name;

}  // namespace attn::experiments
