// Anomaly detection (attn::set_detect_anomaly): the first op whose forward or backward
// produces NaN/Inf throws, naming the op, its tape position and its inputs; off, nothing is
// checked (Release) and the values flow on as IEEE arithmetic makes them.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/tape.h"
#include "tests/error_message.h"

namespace attn {

TEST_SUITE("autograd") {
  TEST_CASE("anomaly mode is off by default and restored by its scope") {
    CHECK_FALSE(detect_anomaly());
    {
      AnomalyMode on;
      CHECK(detect_anomaly());
      {
        AnomalyMode off(false);
        CHECK_FALSE(detect_anomaly());
      }
      CHECK(detect_anomaly());
    }
    CHECK_FALSE(detect_anomaly());
#ifndef ATTN_CHECK_FINITE  // Debug builds check every op always
    Var x = Var::parameter(Tensor::from_vector({3}, {1, 0, 2}));
    CHECK(std::isinf(log(x).value()[1]));  // off: -inf flows on unchecked
    tape().clear();
#endif
  }

  TEST_CASE("first_non_finite finds the first NaN/Inf in any block, or returns -1") {
    Tensor t = Tensor::zeros({3, 5000});  // four 4096-element blocks
    CHECK(first_non_finite(t) == -1);
    t.data()[14999] = std::numeric_limits<real>::quiet_NaN();
    CHECK(first_non_finite(t) == 14999);
    t.data()[4096] = -std::numeric_limits<real>::infinity();
    CHECK(first_non_finite(t) == 4096);
    t.data()[7] = std::numeric_limits<real>::max();  // finite, however large
    CHECK(first_non_finite(t) == 4096);
    t.data()[4095] = std::numeric_limits<real>::infinity();
    CHECK(first_non_finite(t) == 4095);
  }

  TEST_CASE("anomaly mode names the first op whose forward produces NaN/Inf") {
    AnomalyMode on;
    Var x = Var::parameter(Tensor::from_vector({2, 3}, {1, 2, 3, 4, 5, 6}));
    x.set_name("x");
    Var shifted = add_scalar(x, -4);  // record #0: (-3,-2,-1,0,1,2)
    Var ok = mul_scalar(shifted, 2);  // record #1
    const std::string msg =
        testing::error_of([&] { log(shifted); });  // log(0) = -inf, log(-1) = nan
    INFO(msg);
    CHECK(msg.find("log: non-finite output") != std::string::npos);
    CHECK(msg.find("tape position #2") != std::string::npos);
    CHECK(msg.find("of its output (2,3)") != std::string::npos);
    CHECK(msg.find("input 0: (2,3) finite") != std::string::npos);
    CHECK(msg.find("this op is where the NaN/Inf first appears") != std::string::npos);
    CHECK(tape().size() == 2);  // the failing op was not recorded
    tape().clear();
  }

  TEST_CASE("anomaly mode says when an input was already non-finite, and checks untracked ops") {
    AnomalyMode on;
    const real inf = std::numeric_limits<real>::infinity();
    Var w = Var::parameter(Tensor::from_vector({3}, {1, inf, 2}));         // a leaf gone bad
    const std::string msg = testing::error_of([&] { mul_scalar(w, 0); });  // inf * 0 = nan
    INFO(msg);
    CHECK(msg.find("mul_scalar") != std::string::npos);
    CHECK(msg.find("input 0: (3) already non-finite (inf at flat index 1)") != std::string::npos);
    CHECK(msg.find("an input was already non-finite") != std::string::npos);
    NoGrad off;  // not recorded, still checked
    Var c = Var::constant(Tensor::from_vector({2}, {1, 0}));
    const std::string untracked = testing::error_of([&] { div(c, c); });  // 0/0
    CHECK(untracked.find("not recorded on the tape") != std::string::npos);
    tape().clear();
  }

  TEST_CASE("anomaly mode names the first op whose backward produces NaN/Inf") {
    // sqrt(0) = 0 is finite, but its derivative 1/(2 sqrt(x)) is infinite there.
    Var x = Var::parameter(Tensor::from_vector({3}, {4, 0, 1}));
    Var y = sum(sqrt(x));  // records #0 sqrt, #1 sum
    const std::string msg = testing::error_of([&] {
      AnomalyMode on;
      y.backward();
    });
    INFO(msg);
    CHECK(msg.find("sqrt: non-finite gradient inf at flat index 1 for input 0 (3)") !=
          std::string::npos);
    CHECK(msg.find("backward pass") != std::string::npos);
    CHECK(msg.find("tape position #0") != std::string::npos);
    CHECK(msg.find("dy (3), was finite") != std::string::npos);
    tape().clear();
#ifndef ATTN_CHECK_FINITE
    Var z = sum(sqrt(x));  // off: the infinite gradient arrives unchecked
    z.backward();
    CHECK(std::isinf(x.grad()[1]));
#endif
  }
}

}  // namespace attn
