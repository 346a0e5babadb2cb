// The one number parser of the command line: whole-text parsing of the values given to
// `attnlab run` fields and `attnlab train` options.
//
//   using namespace attn::train::options;
//   parse_int("32", "--d_model");            // 32
//   parse_real("5e-3", "--lr");              // 0.005
//   parse_bool("off", "--residual");         // false
//   parse_ints("16,64,256", "--lengths");    // {16, 64, 256}
//   parse_int("12x", "--steps");             // attn::UsageError: --steps: cannot read '12x' ...
//
// "12x" and "" are errors, not 12 and 0; so are "nan" and "inf" for a real. A well-formed number
// too large for its type ("1e309", "99999999999999999999") or a real too close to zero
// ("1e-400") says it is out of range. Every error is an attn::UsageError naming the flag.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attn::train::options {

int64_t parse_int(const std::string& text, const std::string& flag);
// Finite reals only.
double parse_real(const std::string& text, const std::string& flag);
// true/1/yes/on and false/0/no/off.
bool parse_bool(const std::string& text, const std::string& flag);
// Comma-separated lists; an empty element ("8,,16") is an error naming the whole text.
std::vector<int64_t> parse_ints(const std::string& text, const std::string& flag);
std::vector<double> parse_reals(const std::string& text, const std::string& flag);

}  // namespace attn::train::options
