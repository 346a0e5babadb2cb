// How long each experiment of the catalogue takes at its defaults on 2 cores, measured: the
// "time" column of `attnlab list`, and the pace `attnlab run --all` announces.
//
//   if (auto s = measured_seconds("depth-hops")) fmt::print("{}\n", time_text(*s));  // "~52 s"
//
// The numbers live in measured_times.cpp, which bench/catalogue.py writes from a catalogue run
// (`scripts/bench --catalogue --write-times experiments/measured_times.cpp`), so the column says
// what a run took, not what someone guessed. An experiment without an entry (one added since
// the last catalogue run, or a student's) shows its own Experiment::typical_time instead.
#pragma once

#include <optional>
#include <string>

namespace attn::experiments {

// The median wall time of `name` at its defaults in the last catalogue run, or nullopt.
std::optional<double> measured_seconds(const std::string& name);
// Where and when those numbers were measured (one line).
const char* measured_times_origin();
// Seconds as `attnlab list` shows them: "< 1 s", "~7 s", "~52 s", "~2.5 min", "~12 min".
std::string time_text(double seconds);

}  // namespace attn::experiments
