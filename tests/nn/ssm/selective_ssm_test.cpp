// The S6 layer (nn/ssm/selective_ssm.h) and its two scans: the chunked fused op
// attn::selective_scan equals the sequential scan in elementary ops (values and every gradient,
// across chunk sizes that do and do not divide T), the layer agrees with itself on both scans,
// step-by-step decoding with the fixed-size state reproduces the full forward, and the layer is
// causal.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/mode.h"
#include "nn/ssm/selective_scan_reference.h"
#include "nn/ssm/selective_ssm.h"

namespace attn::nn {

namespace {

// max|a - b| / max(1, max|b|), the parity suite's measure.
double rel_diff(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  double diff = 0, scale = 1;
  for (int64_t i = 0; i < a.numel(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::abs(static_cast<double>(b[i])));
  }
  return diff / scale;
}

// Float rounding grows with the number of steps a value passes through (the state is carried
// over T steps and dA, dD sum over all of them): the bound grows with T.
double tolerance(int64_t t_len) {
  return 2e-6 * (4.0 + static_cast<double>(t_len) / 16.0);
}

struct ScanInputs {
  std::vector<Tensor> t;  // u, delta, A, B, C, D
};

ScanInputs scan_inputs(int64_t batch, int64_t t_len, int64_t e, int64_t n, Generator& g) {
  Tensor a = Tensor::rand({e, n}, g, 0.3, 4.0);
  for (int64_t i = 0; i < a.numel(); ++i) a[i] = -a[i];
  return {{Tensor::randn({batch, t_len, e}, g), Tensor::rand({batch, t_len, e}, g, 0.01, 1.2), a,
           Tensor::randn({batch, t_len, n}, g), Tensor::randn({batch, t_len, n}, g),
           Tensor::randn({e}, g)}};
}

struct Run {
  Tensor y;
  std::vector<Tensor> grads;
};

using ScanFn = std::function<Var(const std::vector<Var>&)>;

Run run_scan(const ScanInputs& in, const Tensor& gy, const ScanFn& f) {
  std::vector<Var> leaves;
  for (const Tensor& t : in.t) leaves.push_back(Var::parameter(t.clone()));
  Var y = f(leaves);
  y.backward(gy);
  Run r{y.value(), {}};
  for (const Var& l : leaves) r.grads.push_back(l.grad());
  return r;
}

// The layer's output and the gradients of every parameter and of x, for loss = sum(y * gy).
Run run_layer(SelectiveSSM& m, const Tensor& x, const Tensor& gy) {
  m.zero_grad();
  Var xv = Var::parameter(x.clone());
  Var y = m.forward(xv);
  y.backward(gy);
  Run r{y.value(), {}};
  for (const Var& p : m.parameters()) r.grads.push_back(p.grad());
  r.grads.push_back(xv.grad());
  return r;
}

std::shared_ptr<SelectiveSSM> make_layer(int64_t d_model, SsmScan scan, int64_t chunk) {
  Generator gen(7);
  SelectiveSsmOptions o;
  o.d_state = 4;
  o.scan = scan;
  o.chunk = chunk;
  auto m = std::make_shared<SelectiveSSM>(d_model, gen, o);
  // Wider step sizes than the initial [1e-3, 0.1] so the state decays noticeably within T.
  Tensor& bias = m->dt_proj->bias.value();
  for (int64_t i = 0; i < bias.numel(); ++i) bias[i] += 2;
  return m;
}

}  // namespace

TEST_SUITE("nn") {
  TEST_CASE("selective scan: the chunked fused op equals the sequential tape scan") {
    struct Case {
      int64_t t_len, chunk;
    };
    const std::vector<Case> cases = {{1, 64},  {5, 1},   {5, 2},    {17, 4},   {64, 16},
                                     {64, 64}, {100, 7}, {256, 64}, {1024, 64}};
    for (const Case& c : cases) {
      CAPTURE(c.t_len);
      CAPTURE(c.chunk);
      Generator g(static_cast<uint64_t>(100 + c.t_len + c.chunk));
      const ScanInputs in = scan_inputs(2, c.t_len, 3, 4, g);
      const Tensor gy = Tensor::randn({2, c.t_len, 3}, g);
      const Run ref = run_scan(in, gy, [](const std::vector<Var>& v) {
        return selective_scan_sequential(v[0], v[1], v[2], v[3], v[4], v[5]);
      });
      const Run fast = run_scan(in, gy, [&](const std::vector<Var>& v) {
        return selective_scan(v[0], v[1], v[2], v[3], v[4], v[5], c.chunk);
      });
      const double tol = tolerance(c.t_len);
      CHECK(rel_diff(fast.y, ref.y) <= tol);
      const char* names[] = {"du", "ddelta", "dA", "dB", "dC", "dD"};
      for (size_t i = 0; i < ref.grads.size(); ++i) {
        CAPTURE(names[i]);
        CHECK(rel_diff(fast.grads[i], ref.grads[i]) <= tol);
      }
    }
  }

  TEST_CASE("selective scan: the sequential scan records elementary ops, the fast one one op") {
    Generator g(3);
    const ScanInputs in = scan_inputs(1, 3, 2, 2, g);
    std::vector<Var> v;
    for (const Tensor& t : in.t) v.push_back(Var::parameter(t.clone()));
    tape().clear();
    selective_scan_sequential(v[0], v[1], v[2], v[3], v[4], v[5]);
    const std::string seq = tape().to_string();
    CHECK(seq.find("exp") != std::string::npos);
    CHECK(seq.find("matmul") != std::string::npos);
    CHECK(seq.find("selective_scan") == std::string::npos);
    tape().clear();
    selective_scan(v[0], v[1], v[2], v[3], v[4], v[5]);
    CHECK(tape().size() == 1);
    CHECK(tape().record(0).name() == std::string("selective_scan"));
    tape().clear();
  }

  TEST_CASE("SelectiveSSM: both scans give the same outputs and gradients") {
    for (int64_t t_len : {1, 9, 70}) {
      CAPTURE(t_len);
      auto seq = make_layer(8, SsmScan::kSequential, 16);
      auto chunked = make_layer(8, SsmScan::kChunked, 16);
      CHECK_FALSE(seq->uses_chunked_scan());
      CHECK(chunked->uses_chunked_scan());
      Generator g(11);
      const Tensor x = Tensor::randn({2, t_len, 8}, g);
      const Tensor gy = Tensor::randn({2, t_len, 8}, g);
      const Run a = run_layer(*seq, x, gy), b = run_layer(*chunked, x, gy);
      const double tol = tolerance(t_len);
      CHECK(rel_diff(b.y, a.y) <= tol);
      const auto names = seq->named_parameters();
      for (size_t i = 0; i < a.grads.size(); ++i) {
        CAPTURE(i < names.size() ? names[i].first : std::string("x"));
        CHECK(rel_diff(b.grads[i], a.grads[i]) <= tol);
      }
    }
  }

  TEST_CASE("SelectiveSSM: the scan follows reference_mode() unless forced") {
    auto m = make_layer(4, SsmScan::kAuto, 8);
    {
      ReferenceModeScope ref(true);
      CHECK_FALSE(m->uses_chunked_scan());
    }
    {
      ReferenceModeScope fast(false);
      CHECK(m->uses_chunked_scan());
    }
    CHECK(ssm_scan_from_name("chunked") == SsmScan::kChunked);
    CHECK(std::string(ssm_scan_name(SsmScan::kSequential)) == "sequential");
    CHECK_THROWS_AS(ssm_scan_from_name("parallel"), UsageError);
  }

  TEST_CASE("SelectiveSSM: decoding step by step with a fixed-size state equals the forward") {
    for (SsmScan scan : {SsmScan::kSequential, SsmScan::kChunked}) {
      CAPTURE(ssm_scan_name(scan));
      auto m = make_layer(6, scan, 4);
      Generator g(5);
      const int64_t batch = 2, t_len = 13;
      const Tensor x = Tensor::randn({batch, t_len, 6}, g);
      NoGrad off;
      const Tensor full = m->forward(Var::constant(x)).value();
      SelectiveSsmState st = m->initial_state(batch);
      const int64_t state_numel = st.conv.numel() + st.h.numel();
      CHECK(state_numel == batch * m->state_numel_per_sequence());
      std::vector<Var> steps;
      for (int64_t t = 0; t < t_len; ++t) {
        steps.push_back(m->step(slice(Var::constant(x), 1, t, t + 1), st));
        CHECK(st.conv.numel() + st.h.numel() == state_numel);  // the state never grows
      }
      CHECK(rel_diff(concat(steps, 1).value(), full) <= tolerance(t_len));
    }
  }

  TEST_CASE("SelectiveSSM: is causal, output t depends on inputs <= t only") {
    for (SsmScan scan : {SsmScan::kSequential, SsmScan::kChunked}) {
      CAPTURE(ssm_scan_name(scan));
      auto m = make_layer(4, scan, 3);
      Generator g(9);
      const int64_t t_len = 10, changed = 6;
      Tensor x = Tensor::randn({1, t_len, 4}, g);
      NoGrad off;
      const Tensor before = m->forward(Var::constant(x)).value();
      for (int64_t c = 0; c < 4; ++c) x[changed * 4 + c] += 1;
      const Tensor after = m->forward(Var::constant(x)).value();
      for (int64_t t = 0; t < t_len; ++t) {
        double diff = 0;
        for (int64_t c = 0; c < 4; ++c)
          diff =
              std::max(diff, static_cast<double>(std::abs(after[t * 4 + c] - before[t * 4 + c])));
        CAPTURE(t);
        if (t < changed)
          CHECK(diff == 0);  // exactly: nothing of the later input reaches here
        else
          CHECK(diff > 1e-4);
      }
    }
  }

  TEST_CASE("SelectiveSSM: Mamba's parameter names, shapes and initial values") {
    Generator gen(1);
    SelectiveSSM m(32, gen, {.d_state = 16});
    const auto params = m.named_parameters();
    std::vector<std::string> names;
    for (const auto& [name, v] : params) names.push_back(name);
    // Own parameters first, then the submodules' (PyTorch's named_parameters() order too).
    CHECK(names == std::vector<std::string>{"A_log", "D", "in_proj.weight", "conv1d.weight",
                                            "conv1d.bias", "x_proj.weight", "dt_proj.weight",
                                            "dt_proj.bias", "out_proj.weight"});
    CHECK(m.d_inner() == 64);
    CHECK(m.in_proj->weight.shape() == Shape{128, 32});
    CHECK(m.conv1d->weight.shape() == Shape{64, 1, 4});
    CHECK(m.x_proj->weight.shape() == Shape{2 + 32, 64});  // dt_rank ceil(32/16) = 2, 2 N
    CHECK(m.dt_proj->weight.shape() == Shape{64, 2});
    CHECK(m.A_log.shape() == Shape{64, 16});
    CHECK(m.A_log.value()[5 * 16 + 3] == doctest::Approx(std::log(4.0)));  // A = -(n+1)
    CHECK(m.D.value()[17] == 1);
    // softplus(dt_proj.bias) lies in [dt_min, dt_max]: the initial step sizes.
    for (int64_t e = 0; e < 64; ++e) {
      const double b = m.dt_proj->bias.value()[e];
      const double dt = std::log1p(std::exp(b));
      CHECK(dt >= 1e-3 * 0.999);
      CHECK(dt <= 0.1 * 1.001);
    }
    CHECK(m.state_numel_per_sequence() == 3 * 64 + 64 * 16);
  }
}

}  // namespace attn::nn
