// Config: the settings of an experiment (`attnlab run`) or of a training run (`attnlab train`)
// as a list of typed, documented fields: the one options system of the command line.
//
//   using namespace attn::train::options;
//   Config cfg;
//   cfg.add_int("d_model", 32, "width of the token vectors", {.min = 1})
//       .add_real("lr", 5e-3, "Adam learning rate", {.min = 0, .min_exclusive = true})
//       .add_bool("positions", false, "add sinusoidal positions to the input")
//       .add_ints("lengths", {16, 64, 256}, "sequence lengths to time")
//       .add_string("mask", "none", "which mask to apply", {"none", "causal"});
//   cfg.set("d-model", "64");            // from the command line: '-' and '_' are the same
//   cfg.get_int("d_model");              // 64
//   cfg.help_text();                     // what `--help` prints
//
// Shared groups of fields (model, optimizer and schedule, data, evaluation, seed) with one name
// each are in train/options/groups.h; they list under their own heading in help_text(). Values
// are parsed by train/options/parse.h; a bad name or value throws attn::UsageError naming the
// flag and the closest valid field (or choice) from train/options/suggest.h, so the CLI can exit
// with code 2 and a useful message.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace attn::train::options {

enum class FieldType { kInt, kReal, kBool, kString, kIntList, kRealList };

using FieldValue =
    std::variant<int64_t, double, bool, std::string, std::vector<int64_t>, std::vector<double>>;

// Optional bounds on a number (for lists: on every element); inclusive unless marked exclusive:
// {.min = 0, .max = 1, .max_exclusive = true} is [0, 1).
struct Range {
  std::optional<double> min;
  std::optional<double> max;
  bool min_exclusive = false;
  bool max_exclusive = false;
};

struct Field {
  std::string name;  // snake_case, e.g. "d_model"
  FieldType type;
  FieldValue value;
  FieldValue default_value;
  std::string help;
  Range range;
  std::vector<std::string> choices;  // strings only; empty = any string
  std::string heading;               // the --help section; "" = the owner's own fields
};

const char* type_name(FieldType type);
// The value as the command line would spell it: "32", "0.005", "true", "16,64,256".
std::string format_value(const FieldValue& value);

class Config {
 public:
  Config& add_int(const std::string& name, int64_t def, const std::string& help, Range range = {});
  Config& add_real(const std::string& name, double def, const std::string& help, Range range = {});
  Config& add_bool(const std::string& name, bool def, const std::string& help);
  Config& add_string(const std::string& name,
                     const std::string& def,
                     const std::string& help,
                     std::vector<std::string> choices = {});
  Config& add_ints(const std::string& name,
                   std::vector<int64_t> def,
                   const std::string& help,
                   Range range = {});
  Config& add_reals(const std::string& name,
                    std::vector<double> def,
                    const std::string& help,
                    Range range = {});
  // Fields added from now on list under `heading` in help_text() ("" = the owner's own).
  Config& heading(const std::string& heading);
  const std::string& heading() const { return heading_; }

  bool has(const std::string& name) const { return find(name) != nullptr; }
  // Parses `text` as the field's type and checks its range/choices. `name` may use '-' for '_'
  // and may start with "--".
  void set(const std::string& name, const std::string& text);

  // Typed access; asking for a missing field or the wrong type is a programming error
  // (attn::Error).
  int64_t get_int(const std::string& name) const;
  double get_real(const std::string& name) const;
  bool get_bool(const std::string& name) const;
  const std::string& get_string(const std::string& name) const;
  const std::vector<int64_t>& get_ints(const std::string& name) const;
  const std::vector<double>& get_reals(const std::string& name) const;
  // The field's value as text (format_value); a missing field is an attn::Error.
  std::string text(const std::string& name) const;

  const std::vector<Field>& fields() const { return fields_; }
  std::vector<std::string> names() const;
  // Fields whose value differs from the default (the document's setting), except `ignore`.
  std::vector<std::string> changed(const std::vector<std::string>& ignore = {"seed"}) const;
  // {"d_model": 32, ...} with JSON types.
  nlohmann::ordered_json to_json() const;
  // One line per field, `--name <type>  help (default ..., now ...; one of ...)`: first the
  // owner's own fields under `own_heading`, then each group under its heading.
  std::string help_text(const std::string& own_heading = "") const;

 private:
  Config& add(Field field);
  const Field* find(const std::string& name) const;
  Field* find(const std::string& name);
  const Field& get(const std::string& name, FieldType type) const;

  std::vector<Field> fields_;
  std::string heading_;
};

// "--d-model" -> "d_model".
std::string canonical_field_name(const std::string& name);

// A check across two fields: `divisor` must divide `dividend` (heads must divide the width, so
// each head gets a whole number of dimensions). Throws attn::UsageError naming both flags.
void require_divides(const Config& cfg, const std::string& divisor, const std::string& dividend);

}  // namespace attn::train::options
