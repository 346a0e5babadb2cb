#include "nn/positional/sinusoidal.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "autograd/error.h"
#include "autograd/functional.h"

namespace attn::nn {

Tensor sinusoidal_table(int64_t max_len, int64_t d_model) {
  if (max_len <= 0 || d_model <= 0)
    throw Error(fmt::format("sinusoidal_table: max_len and d_model must be positive, got {} and {}",
                            max_len, d_model));
  Tensor pe = Tensor::empty({max_len, d_model});
  for (int64_t pos = 0; pos < max_len; ++pos) {
    for (int64_t c = 0; c < d_model; ++c) {
      const int64_t two_i = c - c % 2;  // both columns of a pair share one frequency
      const double angle =
          static_cast<double>(pos) / std::pow(10000.0, static_cast<double>(two_i) / d_model);
      pe[pos * d_model + c] = static_cast<real>(c % 2 == 0 ? std::sin(angle) : std::cos(angle));
    }
  }
  return pe;
}

Tensor table_rows(const Tensor& table, int64_t start, int64_t len, const char* who) {
  const int64_t n = table.size(0), c = table.size(1);
  if (start < 0 || len < 0 || start + len > n)
    throw Error(fmt::format("{}: positions [{}, {}) exceed the table of {} positions (max_len)",
                            who, start, start + len, n));
  Tensor rows = Tensor::empty({len, c});
  std::copy(table.data() + start * c, table.data() + (start + len) * c, rows.data());
  return rows;
}

SinusoidalPositionalEncoding::SinusoidalPositionalEncoding(int64_t max_len, int64_t d_model)
    : Module("SinusoidalPositionalEncoding"), max_len_(max_len), d_model_(d_model) {
  pe_ = register_buffer("pe", sinusoidal_table(max_len, d_model));
}

Var SinusoidalPositionalEncoding::forward(const Var& x, int64_t start_pos) const {
  if ((x.rank() != 2 && x.rank() != 3) || x.shape().back() != d_model_)
    throw Error(fmt::format("SinusoidalPositionalEncoding: expected x (B,T,{}) or (T,{}), got {}",
                            d_model_, d_model_, shape_str(x.shape())));
  const int64_t t = x.size(-2);
  return add(x, Var::constant(table_rows(pe_, start_pos, t, "SinusoidalPositionalEncoding")));
}

}  // namespace attn::nn
