// A seeded random number generator, passed explicitly wherever randomness is used.
//
//   attn::Generator gen(42);
//   double u = gen.uniform();     // [0, 1)
//   double z = gen.normal();      // N(0, 1)
//   std::string s = gen.state();  // save ...
//   gen.set_state(s);             // ... and restore exactly (checkpoints use this)
//
// There is no hidden global generator: two runs with the same seeds draw the same numbers.
#pragma once

#include <cstdint>
#include <random>
#include <string>

namespace attn {

class Generator {
 public:
  explicit Generator(uint64_t seed = 0) : engine_(seed) {}

  // Uniform in [0, 1) with 53 random bits.
  double uniform();
  // Standard normal by the Box-Muller transform (our own, so results do not depend on the
  // standard library's distribution implementation). Caches the second value.
  double normal();
  // Uniform integer in [0, n).
  int64_t randint(int64_t n);
  uint64_t next_u64() { return engine_(); }

  std::string state() const;
  void set_state(const std::string& state);

 private:
  std::mt19937_64 engine_;
  bool has_spare_ = false;
  double spare_ = 0.0;
};

}  // namespace attn
