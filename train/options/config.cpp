#include "train/options/config.h"

#include <algorithm>

#include <fmt/format.h>

#include "autograd/error.h"
#include "train/options/parse.h"
#include "train/options/suggest.h"

namespace attn::train::options {

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

bool below_min(const Range& r, double v) {
  return r.min && (r.min_exclusive ? v <= *r.min : v < *r.min);
}
bool above_max(const Range& r, double v) {
  return r.max && (r.max_exclusive ? v >= *r.max : v > *r.max);
}

// "at least 1", "greater than 0", "between 0 and 1", "at least 0 and less than 1".
std::string bounds_text(const Range& r) {
  const std::string low =
      r.min ? fmt::format("{} {}", r.min_exclusive ? "greater than" : "at least", *r.min) : "";
  const std::string high =
      r.max ? fmt::format("{} {}", r.max_exclusive ? "less than" : "at most", *r.max) : "";
  if (r.min && r.max && !r.min_exclusive && !r.max_exclusive)
    return fmt::format("between {} and {}", *r.min, *r.max);
  if (r.min && r.max) return low + " and " + high;
  return r.min ? low : high;
}

void check_range(const Field& f, double v, const std::string& text) {
  if (below_min(f.range, v) || above_max(f.range, v))
    throw UsageError(
        fmt::format("--{}: {} is out of range; it must be {}", f.name, text, bounds_text(f.range)));
}

template <class T>
void check_each(const Field& f, const std::vector<T>& xs) {
  for (const T x : xs) check_range(f, static_cast<double>(x), format_value(FieldValue{x}));
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
  std::string s = name.rfind("--", 0) == 0 ? name.substr(2) : name;
  for (char& c : s)
    if (c == '-') c = '_';
  return s;
}

Config& Config::add(Field field) {
  if (find(field.name)) throw Error("Config: field '" + field.name + "' is defined twice");
  field.default_value = field.value;
  field.heading = heading_;
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
  const std::string key = canonical_field_name(name);
  if (!f) throw UsageError("unknown field --" + key + "." + did_you_mean(key, names(), "--"));
  const std::string flag = "--" + f->name;
  switch (f->type) {
    case FieldType::kInt: {
      const int64_t v = parse_int(text, flag);
      check_range(*f, static_cast<double>(v), text);
      f->value = v;
      break;
    }
    case FieldType::kReal: {
      const double v = parse_real(text, flag);
      check_range(*f, v, text);
      f->value = v;
      break;
    }
    case FieldType::kBool:
      f->value = parse_bool(text, flag);
      break;
    case FieldType::kString:
      if (!f->choices.empty() &&
          std::find(f->choices.begin(), f->choices.end(), text) == f->choices.end())
        throw UsageError(
            fmt::format("{}: '{}' is not a choice.{}", flag, text, did_you_mean(text, f->choices)));
      f->value = text;
      break;
    case FieldType::kIntList: {
      auto xs = parse_ints(text, flag);
      check_each(*f, xs);
      f->value = std::move(xs);
      break;
    }
    case FieldType::kRealList: {
      auto xs = parse_reals(text, flag);
      check_each(*f, xs);
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

Config& Config::heading(const std::string& heading) {
  heading_ = heading;
  return *this;
}

std::string Config::text(const std::string& name) const {
  const Field* f = find(name);
  if (!f) throw Error("Config: no field '" + name + "'." + did_you_mean(name, names()));
  return format_value(f->value);
}

std::string Config::help_text(const std::string& own_heading) const {
  size_t width = 0;
  for (const auto& f : fields_)
    width = std::max(width, f.name.size() + std::string(type_name(f.type)).size() + 5);
  auto line = [&](const Field& f) {
    const std::string flag = fmt::format("--{} <{}>", f.name, type_name(f.type));
    std::string extra = "default " + format_value(f.default_value);
    if (f.value != f.default_value) extra += ", now " + format_value(f.value);
    if (!f.choices.empty()) {
      extra += "; one of";
      for (const auto& c : f.choices) extra += " " + c;
    }
    return fmt::format("  {:<{}}  {} ({})\n", flag, width, f.help, extra);
  };
  // Headings in the order they first appear, the owner's own fields first.
  std::vector<std::string> headings{""};
  for (const auto& f : fields_)
    if (std::find(headings.begin(), headings.end(), f.heading) == headings.end())
      headings.push_back(f.heading);
  std::string out;
  for (const auto& h : headings) {
    std::string section;
    for (const auto& f : fields_)
      if (f.heading == h) section += line(f);
    if (section.empty()) continue;
    const std::string title = h.empty() ? own_heading : h;
    if (!out.empty()) out += "\n";
    if (!title.empty()) out += title + ":\n";
    out += section;
  }
  return out;
}

void require_divides(const Config& cfg, const std::string& divisor, const std::string& dividend) {
  const int64_t d = cfg.get_int(divisor), n = cfg.get_int(dividend);
  if (d <= 0 || n % d != 0)
    throw UsageError(fmt::format("--{} {} must divide --{} {}: each head gets {}/{} dimensions",
                                 divisor, d, dividend, n, dividend, divisor));
}

}  // namespace attn::train::options
