#include "experiments/config.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "autograd/error.h"
#include "experiments/suggest.h"

namespace attn::experiments {

namespace {

std::string format_real(double v) {
  return fmt::format("{}", v);  // shortest text that reads back as the same double
}

template <class T>
std::string join_list(const std::vector<T>& xs) {
  std::string s;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i) s += ",";
    if constexpr (std::is_same_v<T, double>)
      s += format_real(xs[i]);
    else
      s += std::to_string(xs[i]);
  }
  return s;
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return parts;
}

// Whole-string number parsing: "12x" and "" are errors, not 12 and 0.
std::optional<int64_t> parse_int(const std::string& s) {
  if (s.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE) return std::nullopt;
  return v;
}

std::optional<double> parse_real(const std::string& s) {
  if (s.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (*end != '\0' || errno == ERANGE || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<bool> parse_bool(const std::string& s) {
  if (s == "true" || s == "1" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "0" || s == "no" || s == "off") return false;
  return std::nullopt;
}

void check_range(const Field& f, double v, const std::string& text) {
  if ((f.range.min && v < *f.range.min) || (f.range.max && v > *f.range.max)) {
    std::string bounds;
    if (f.range.min && f.range.max)
      bounds = fmt::format("between {} and {}", *f.range.min, *f.range.max);
    else if (f.range.min)
      bounds = fmt::format("at least {}", *f.range.min);
    else
      bounds = fmt::format("at most {}", *f.range.max);
    throw UsageError(fmt::format("--{}: {} is out of range; it must be {}", f.name, text, bounds));
  }
}

// True when `s` is a well-formed number too large (or, for a real, too close to zero) for its
// type: "1e309", "1e-400", "99999999999999999999".
bool out_of_range(const std::string& s, bool real) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  if (real)
    std::strtod(s.c_str(), &end);
  else
    std::strtoll(s.c_str(), &end, 10);
  return *end == '\0' && errno == ERANGE;
}

// `part`: the list element that failed (the whole text for a single value).
UsageError bad_value(const Field& f,
                     const std::string& text,
                     const std::string& expected,
                     const std::string& part) {
  const bool real = f.type == FieldType::kReal || f.type == FieldType::kRealList;
  const bool numeric = f.type != FieldType::kBool && f.type != FieldType::kString;
  if (numeric && out_of_range(part, real))
    return UsageError(fmt::format(
        "--{}: {} is out of range for a {} ({})", f.name, part, real ? "real" : "whole number",
        real ? "magnitudes from about 2.2e-308 to 1.8e308" : "at most 9223372036854775807"));
  return UsageError(
      fmt::format("--{}: cannot read '{}' as {} ({})", f.name, text, type_name(f.type), expected));
}

}  // namespace

const char* type_name(FieldType type) {
  switch (type) {
    case FieldType::kInt:
      return "int";
    case FieldType::kReal:
      return "real";
    case FieldType::kBool:
      return "bool";
    case FieldType::kString:
      return "string";
    case FieldType::kIntList:
      return "ints";
    case FieldType::kRealList:
      return "reals";
  }
  return "?";
}

std::string format_value(const FieldValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) return std::to_string(v);
        if constexpr (std::is_same_v<T, double>) return format_real(v);
        if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
        if constexpr (std::is_same_v<T, std::string>) return v;
        if constexpr (std::is_same_v<T, std::vector<int64_t>> ||
                      std::is_same_v<T, std::vector<double>>)
          return join_list(v);
      },
      value);
}

std::string canonical_field_name(const std::string& name) {
  std::string s = name;
  for (char& c : s)
    if (c == '-') c = '_';
  return s;
}

Config& Config::add(Field field) {
  if (find(field.name)) throw Error("Config: field '" + field.name + "' is defined twice");
  field.default_value = field.value;
  fields_.push_back(std::move(field));
  return *this;
}

Config& Config::add_int(const std::string& name, int64_t def, const std::string& help, Range r) {
  return add({name, FieldType::kInt, def, def, help, r, {}});
}
Config& Config::add_real(const std::string& name, double def, const std::string& help, Range r) {
  return add({name, FieldType::kReal, def, def, help, r, {}});
}
Config& Config::add_bool(const std::string& name, bool def, const std::string& help) {
  return add({name, FieldType::kBool, def, def, help, {}, {}});
}
Config& Config::add_string(const std::string& name,
                           const std::string& def,
                           const std::string& help,
                           std::vector<std::string> choices) {
  return add({name, FieldType::kString, def, def, help, {}, std::move(choices)});
}
Config& Config::add_ints(const std::string& name,
                         std::vector<int64_t> def,
                         const std::string& help,
                         Range r) {
  return add({name, FieldType::kIntList, def, def, help, r, {}});
}
Config& Config::add_reals(const std::string& name,
                          std::vector<double> def,
                          const std::string& help,
                          Range r) {
  return add({name, FieldType::kRealList, def, def, help, r, {}});
}

const Field* Config::find(const std::string& name) const {
  const std::string key = canonical_field_name(name);
  for (const auto& f : fields_)
    if (f.name == key) return &f;
  return nullptr;
}

Field* Config::find(const std::string& name) {
  return const_cast<Field*>(static_cast<const Config*>(this)->find(name));
}

std::vector<std::string> Config::names() const {
  std::vector<std::string> out;
  for (const auto& f : fields_) out.push_back(f.name);
  return out;
}

std::vector<std::string> Config::changed(const std::vector<std::string>& ignore) const {
  std::vector<std::string> out;
  for (const auto& f : fields_)
    if (f.value != f.default_value &&
        std::find(ignore.begin(), ignore.end(), f.name) == ignore.end())
      out.push_back(f.name);
  return out;
}

void Config::set(const std::string& name, const std::string& text) {
  Field* f = find(name);
  if (!f) throw UsageError("unknown field --" + name + "." + did_you_mean(name, names(), "--"));
  switch (f->type) {
    case FieldType::kInt: {
      auto v = parse_int(text);
      if (!v) throw bad_value(*f, text, "a whole number, e.g. 32", text);
      check_range(*f, static_cast<double>(*v), text);
      f->value = *v;
      break;
    }
    case FieldType::kReal: {
      auto v = parse_real(text);
      if (!v) throw bad_value(*f, text, "a finite number, e.g. 0.005 or 5e-3", text);
      check_range(*f, *v, text);
      f->value = *v;
      break;
    }
    case FieldType::kBool: {
      auto v = parse_bool(text);
      if (!v) throw bad_value(*f, text, "true or false", text);
      f->value = *v;
      break;
    }
    case FieldType::kString: {
      if (!f->choices.empty() &&
          std::find(f->choices.begin(), f->choices.end(), text) == f->choices.end())
        throw UsageError(fmt::format("--{}: '{}' is not a choice.{}", f->name, text,
                                     did_you_mean(text, f->choices)));
      f->value = text;
      break;
    }
    case FieldType::kIntList: {
      std::vector<int64_t> xs;
      for (const auto& part : split_commas(text)) {
        auto v = parse_int(part);
        if (!v) throw bad_value(*f, text, "comma-separated whole numbers, e.g. 16,64,256", part);
        check_range(*f, static_cast<double>(*v), part);
        xs.push_back(*v);
      }
      f->value = std::move(xs);
      break;
    }
    case FieldType::kRealList: {
      std::vector<double> xs;
      for (const auto& part : split_commas(text)) {
        auto v = parse_real(part);
        if (!v) throw bad_value(*f, text, "comma-separated numbers, e.g. 0.1,0.5", part);
        check_range(*f, *v, part);
        xs.push_back(*v);
      }
      f->value = std::move(xs);
      break;
    }
  }
}

const Field& Config::get(const std::string& name, FieldType type) const {
  const Field* f = find(name);
  if (!f) throw Error("Config: no field '" + name + "'." + did_you_mean(name, names()));
  if (f->type != type)
    throw Error(
        fmt::format("Config: field '{}' is {}, not {}", name, type_name(f->type), type_name(type)));
  return *f;
}

int64_t Config::get_int(const std::string& name) const {
  return std::get<int64_t>(get(name, FieldType::kInt).value);
}
double Config::get_real(const std::string& name) const {
  return std::get<double>(get(name, FieldType::kReal).value);
}
bool Config::get_bool(const std::string& name) const {
  return std::get<bool>(get(name, FieldType::kBool).value);
}
const std::string& Config::get_string(const std::string& name) const {
  return std::get<std::string>(get(name, FieldType::kString).value);
}
const std::vector<int64_t>& Config::get_ints(const std::string& name) const {
  return std::get<std::vector<int64_t>>(get(name, FieldType::kIntList).value);
}
const std::vector<double>& Config::get_reals(const std::string& name) const {
  return std::get<std::vector<double>>(get(name, FieldType::kRealList).value);
}

nlohmann::ordered_json Config::to_json() const {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& f : fields_) std::visit([&](const auto& v) { j[f.name] = v; }, f.value);
  return j;
}

std::string Config::help_text() const {
  size_t width = 0;
  for (const auto& f : fields_)
    width = std::max(width, f.name.size() + std::string(type_name(f.type)).size() + 5);
  std::string out;
  for (const auto& f : fields_) {
    const std::string flag = fmt::format("--{} <{}>", f.name, type_name(f.type));
    std::string extra = "default " + format_value(f.default_value);
    if (f.value != f.default_value) extra += ", now " + format_value(f.value);
    if (!f.choices.empty()) {
      extra += "; one of";
      for (const auto& c : f.choices) extra += " " + c;
    }
    out += fmt::format("  {:<{}}  {} ({})\n", flag, width, f.help, extra);
  }
  return out;
}

void require_divides(const Config& cfg, const std::string& divisor, const std::string& dividend) {
  const int64_t d = cfg.get_int(divisor), n = cfg.get_int(dividend);
  if (d <= 0 || n % d != 0)
    throw UsageError(fmt::format("--{} {} must divide --{} {}: each head gets {}/{} dimensions",
                                 divisor, d, dividend, n, dividend, divisor));
}

}  // namespace attn::experiments
