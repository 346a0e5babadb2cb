// The scalar type of every tensor.
//
//   attn::real x = 1.5;   // float in the normal build, double in the gradcheck build
//
// The library is compiled twice: once with float (what users run) and once with
// -DATTN_REAL_DOUBLE (what the finite-difference gradient checks run). Float32 central
// differences carry ~1e-3 relative noise, far too much to prove a gradient; in double the
// truncation error is O(eps^2) and the rounding error ~1e-16/eps, so 1e-6 agreement is real.
#pragma once

namespace attn {
#ifdef ATTN_REAL_DOUBLE
using real = double;
inline constexpr const char* real_name = "float64";
#else
using real = float;
inline constexpr const char* real_name = "float32";
#endif
}  // namespace attn
