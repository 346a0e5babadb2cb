// Config: an experiment's settings as a list of typed, documented fields.
//
//   attn::experiments::Config cfg;
//   cfg.add_int("d_model", 32, "width of the token vectors", {.min = 1})
//       .add_real("lr", 5e-3, "Adam learning rate", {.min = 0})
//       .add_bool("positions", false, "add sinusoidal positions to the input")
//       .add_ints("lengths", {16, 64, 256}, "sequence lengths to time")
//       .add_string("mask", "none", "which mask to apply", {}, {"none", "causal"});
//   cfg.set("d-model", "64");            // from the command line: '-' and '_' are the same
//   cfg.get_int("d_model");              // 64
//   cfg.help_text();                     // what `attnlab run <name> --help` prints
//
// Defaults are the document's settings. A bad name or value throws attn::UsageError that names
// the closest valid field (or choice), so the CLI can exit with code 2 and a useful message.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace attn::experiments {

enum class FieldType { kInt, kReal, kBool, kString, kIntList, kRealList };

using FieldValue =
    std::variant<int64_t, double, bool, std::string, std::vector<int64_t>, std::vector<double>>;

// Optional bounds on a number (for lists: on every element).
struct Range {
  std::optional<double> min;
  std::optional<double> max;
};

struct Field {
  std::string name;  // snake_case, e.g. "d_model"
  FieldType type;
  FieldValue value;
  FieldValue default_value;
  std::string help;
  Range range;
  std::vector<std::string> choices;  // strings only; empty = any string
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

  bool has(const std::string& name) const { return find(name) != nullptr; }
  // Parses `text` as the field's type and checks its range/choices. `name` may use '-' for '_'.
  void set(const std::string& name, const std::string& text);

  // Typed access; asking for a missing field or the wrong type is a programming error
  // (attn::Error).
  int64_t get_int(const std::string& name) const;
  double get_real(const std::string& name) const;
  bool get_bool(const std::string& name) const;
  const std::string& get_string(const std::string& name) const;
  const std::vector<int64_t>& get_ints(const std::string& name) const;
  const std::vector<double>& get_reals(const std::string& name) const;

  const std::vector<Field>& fields() const { return fields_; }
  std::vector<std::string> names() const;
  // Fields whose value differs from the default (the document's setting), except `ignore`.
  std::vector<std::string> changed(const std::vector<std::string>& ignore = {"seed"}) const;
  // {"d_model": 32, ...} with JSON types.
  nlohmann::ordered_json to_json() const;
  // One line per field: --name <type>  (default: ...)  help. Marks fields changed from default.
  std::string help_text() const;

 private:
  Config& add(Field field);
  const Field* find(const std::string& name) const;
  Field* find(const std::string& name);
  const Field& get(const std::string& name, FieldType type) const;

  std::vector<Field> fields_;
};

// "d-model" -> "d_model".
std::string canonical_field_name(const std::string& name);

// A check across two fields: `divisor` must divide `dividend` (heads must divide the width, so
// each head gets a whole number of dimensions). Throws attn::UsageError naming both flags.
void require_divides(const Config& cfg, const std::string& divisor, const std::string& dividend);

}  // namespace attn::experiments
