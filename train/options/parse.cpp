#include "train/options/parse.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "autograd/error.h"

namespace attn::train::options {

namespace {

// strtoll/strtod read a prefix; the whole text must be the number. ERANGE marks a well-formed
// number its type cannot hold.
struct Read {
  bool whole = false;  // the entire text is one number
  bool range = false;  // ... but out of range for the type
  long long i = 0;
  double r = 0;
};

Read read_number(const std::string& s, bool real) {
  Read out;
  if (s.empty()) return out;
  errno = 0;
  char* end = nullptr;
  if (real)
    out.r = std::strtod(s.c_str(), &end);
  else
    out.i = std::strtoll(s.c_str(), &end, 10);
  out.whole = *end == '\0';
  out.range = out.whole && errno == ERANGE;
  return out;
}

UsageError unreadable(const std::string& flag,
                      const std::string& text,
                      const char* type,
                      const char* expected) {
  return UsageError(fmt::format("{}: cannot read '{}' as {} ({})", flag, text, type, expected));
}

UsageError out_of_range(const std::string& flag, const std::string& part, bool real) {
  return UsageError(fmt::format(
      "{}: {} is out of range for a {} ({})", flag, part, real ? "real" : "whole number",
      real ? "magnitudes from about 2.2e-308 to 1.8e308" : "at most 9223372036854775807"));
}

// One element: the value, or an error quoting `whole_text` (the list it came from).
int64_t int_part(const std::string& part,
                 const std::string& whole_text,
                 const std::string& flag,
                 const char* type,
                 const char* expected) {
  const Read r = read_number(part, false);
  if (r.range) throw out_of_range(flag, part, false);
  if (!r.whole) throw unreadable(flag, whole_text, type, expected);
  return r.i;
}

double real_part(const std::string& part,
                 const std::string& whole_text,
                 const std::string& flag,
                 const char* type,
                 const char* expected) {
  const Read r = read_number(part, true);
  if (r.range) throw out_of_range(flag, part, true);
  if (!r.whole || !std::isfinite(r.r)) throw unreadable(flag, whole_text, type, expected);
  return r.r;
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

}  // namespace

int64_t parse_int(const std::string& text, const std::string& flag) {
  return int_part(text, text, flag, "int", "a whole number, e.g. 32");
}

double parse_real(const std::string& text, const std::string& flag) {
  return real_part(text, text, flag, "real", "a finite number, e.g. 0.005 or 5e-3");
}

bool parse_bool(const std::string& text, const std::string& flag) {
  if (text == "true" || text == "1" || text == "yes" || text == "on") return true;
  if (text == "false" || text == "0" || text == "no" || text == "off") return false;
  throw unreadable(flag, text, "bool", "true or false");
}

std::vector<int64_t> parse_ints(const std::string& text, const std::string& flag) {
  std::vector<int64_t> xs;
  for (const auto& part : split_commas(text))
    xs.push_back(int_part(part, text, flag, "ints", "comma-separated whole numbers, e.g. 16,64"));
  return xs;
}

std::vector<double> parse_reals(const std::string& text, const std::string& flag) {
  std::vector<double> xs;
  for (const auto& part : split_commas(text))
    xs.push_back(real_part(part, text, flag, "reals", "comma-separated numbers, e.g. 0.1,0.5"));
  return xs;
}

}  // namespace attn::train::options
