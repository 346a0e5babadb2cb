// The gradcheck sweep over the layer registry (nn/registry/layer_cases.h), in double precision:
// every row, every parameter and float input, the full Jacobian against central differences,
// once on each path (autograd/mode.h): the fast path's fused ops and the reference path's
// elementary ops.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <chrono>

#include "autograd/gradcheck.h"
#include "autograd/mode.h"
#include "nn/registry/layer_cases.h"

namespace attn {

static_assert(sizeof(real) == 8, "the gradcheck suite must be built with ATTN_REAL_DOUBLE");

TEST_SUITE("gradcheck") {
  TEST_CASE("every layer registry row passes a double-precision full-Jacobian check") {
    const auto& rows = nn::layer_cases();
    REQUIRE(rows.size() > 0);
    for (const bool reference : {false, true})
      for (const nn::LayerCase& row : rows) {
        const std::string name = row.name + (reference ? " [reference]" : "");
        SUBCASE(name.c_str()) {
          ReferenceModeScope mode(reference);
          Generator gen(1234);
          nn::LayerInstance layer = row.build(gen);
          const auto start = std::chrono::steady_clock::now();
          const GradcheckResult r = gradcheck(layer.leaves, layer.forward);
          const double ms =
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                  .count();
          fmt::print("gradcheck layer {:<44} entries={:<7} max_error={:.2e} ({:.0f} ms)\n", name,
                     r.entries, r.max_error, ms);
          INFO(name, ": ", r.worst);
          CHECK(r.entries > 0);
          CHECK(r.max_error <= 1e-6);
        }
      }
  }
}

}  // namespace attn
