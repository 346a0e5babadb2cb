// The gradcheck sweep over the op registry, in double precision: every row, every
// differentiable input, the full Jacobian against central differences.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "autograd/gradcheck.h"
#include "autograd/registry/registry.h"

namespace attn {

static_assert(sizeof(real) == 8, "the gradcheck suite must be built with ATTN_REAL_DOUBLE");

TEST_SUITE("gradcheck") {
  TEST_CASE("every op registry row passes a double-precision full-Jacobian check") {
    const auto& rows = op_cases();
    REQUIRE(rows.size() > 0);
    for (const OpCase& row : rows) {
      SUBCASE(row.name.c_str()) {
        Generator gen(1234);
        std::vector<CaseInput> inputs = row.make_inputs(gen);
        std::vector<Var> vars, leaves;
        for (CaseInput& in : inputs) {
          Var v(in.value, in.differentiable);
          vars.push_back(v);
          if (in.differentiable) leaves.push_back(v);
        }
        const GradcheckResult r = gradcheck(leaves, [&] { return row.run(vars); });
        fmt::print("gradcheck {:<28} entries={:<6} max_error={:.2e}\n", row.name, r.entries,
                   r.max_error);
        INFO(row.name, ": ", r.worst);
        CHECK(r.entries > 0);
        CHECK(r.max_error <= 1e-6);
      }
    }
  }
}

}  // namespace attn
