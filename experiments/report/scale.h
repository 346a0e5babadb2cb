// Colour maps and axis ticks shared by the figures.
//
//   attn::experiments::viridis(0.0);                     // "#440154" (dark purple) ...
//   viridis(1.0)
//   "#fde725" attn::experiments::nice_ticks(0, 0.37, 5);           // {0, 0.1, 0.2, 0.3}
//   attn::experiments::log_ticks(3e-2, 40);              // {0.1, 1, 10}
//   attn::experiments::display_token(" ");               // "␣" so a space is visible as a label
#pragma once

#include <string>
#include <vector>

namespace attn::experiments {

// The viridis colour map (perceptually uniform, readable in grey and by colour-blind readers),
// t clamped to [0,1].
std::string viridis(double t);
// The colours of viridis at n evenly spaced points (for colour-bar gradients).
std::vector<std::string> viridis_stops(int n = 11);
// True when text on this viridis value should be white.
bool viridis_is_dark(double t);

// Round numbers (steps of 1, 2 or 5 times a power of ten) covering [lo, hi], at most ~max_count.
std::vector<double> nice_ticks(double lo, double hi, int max_count = 6);
// Powers of ten within [lo, hi] (lo > 0); adds 2x and 5x over 3 decades or fewer.
std::vector<double> log_ticks(double lo, double hi);

// A token as a label: ' ' -> '␣', '\n' -> '⏎', tab -> '⇥'.
std::string display_token(const std::string& token);
std::vector<std::string> display_tokens(const std::vector<std::string>& tokens);

// A readable palette for lines and bars (cycled).
const std::string& palette(size_t i);

}  // namespace attn::experiments
