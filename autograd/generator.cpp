#include "autograd/generator.h"

#include <cmath>
#include <sstream>

#include "autograd/error.h"

namespace attn {

double Generator::uniform() {
  return static_cast<double>(engine_() >> 11) * 0x1.0p-53;
}

double Generator::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  // Box-Muller: for u1, u2 ~ U(0,1], r = sqrt(-2 ln u1) and angle 2 pi u2 give two N(0,1).
  const double u1 = 1.0 - uniform();
  const double u2 = uniform();
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double theta = 2.0 * M_PI * u2;
  spare_ = r * std::sin(theta);
  has_spare_ = true;
  return r * std::cos(theta);
}

int64_t Generator::randint(int64_t n) {
  if (n <= 0) throw Error("Generator::randint: n must be positive, got " + std::to_string(n));
  return static_cast<int64_t>(uniform() * static_cast<double>(n)) % n;
}

std::string Generator::state() const {
  std::ostringstream out;
  out << engine_ << ' ' << has_spare_ << ' ';
  out.precision(17);
  out << spare_;
  return out.str();
}

void Generator::set_state(const std::string& state) {
  std::istringstream in(state);
  in >> engine_ >> has_spare_ >> spare_;
  if (!in) throw Error("Generator::set_state: the saved generator state is malformed");
}

}  // namespace attn
