// W9: sliding-window attention two ways, forward+backward, single head (d 64), window w = 64
// (each query sees 2w+1 = 129 keys), T = 512 .. 16384:
//   dense  - sdpa with the (T,T) sliding-window mask (nn::SlidingWindowAttention's path): the
//            scores, the mask and the weights are all T x T, so time and memory grow like T^2;
//   banded - banded_attention, which keeps only the (T, 2w+1) band: both grow like T;
//   banded+random - the same with r = 8 random keys per query (BigBird, autograd/random_links.h;
//            drawn in setup, untimed): (T, 2w+1+r) slots, still linear in T.
// peak_tensor_bytes and the step time are the measures. Dense stops at T = 8192 (its T x T
// tensors alone pass 1 GiB there); long cases time 3 steps.
#include <memory>

#include "autograd/functional.h"
#include "autograd/random_links.h"
#include "bench/workloads/workloads.h"
#include "nn/attention/sdpa.h"
#include "nn/attention/sliding_window.h"

namespace attn::bench {

namespace {

constexpr int64_t kDim = 64, kWindow = 64, kRandomLinks = 8;

struct BandState {
  Var q, k, v;
  Tensor dy, mask;
  RandomLinks links;
};

// links: r = kRandomLinks random keys per query on top of the band (banded only).
BenchCase band_case(int64_t t, bool banded, bool links = false) {
  auto s = std::make_shared<BandState>();
  BenchCase c;
  c.workload = "W9";
  c.name = std::string(links    ? "banded+random"
                       : banded ? "banded"
                                : "dense masked") +
           " fwd+bwd T=" + std::to_string(t);
  // 2 products forward, 4 backward, over the pairs each computes: T^2 (dense) or T (2w+1 [+r]).
  const double pairs = banded
                           ? static_cast<double>(t) * (2 * kWindow + 1 + (links ? kRandomLinks : 0))
                           : static_cast<double>(t) * static_cast<double>(t);
  c.flops = 2.0 * pairs * kDim * 6;
  c.tokens = static_cast<double>(t);
  c.max_steps = t >= 4096 ? 3 : 0;
  c.setup = [s, t, banded, links] {
    Generator gen(9);
    s->q = Var::parameter(Tensor::randn({1, 1, t, kDim}, gen));
    s->k = Var::parameter(Tensor::randn({1, 1, t, kDim}, gen));
    s->v = Var::parameter(Tensor::randn({1, 1, t, kDim}, gen));
    s->dy = Tensor::randn({1, 1, t, kDim}, gen);
    if (!banded) s->mask = nn::sliding_window_mask(t, kWindow);
    if (links) s->links = draw_random_links(t, kWindow, false, {}, kRandomLinks, 9);
  };
  c.step = [s, banded] {
    for (Var* p : {&s->q, &s->k, &s->v}) p->zero_grad();
    Var y;
    if (banded) {
      y = banded_attention(s->q, s->k, s->v, kWindow, false, 0, {}, s->links);
    } else {
      nn::SdpaOptions opt;
      opt.masks.attn_mask = s->mask;
      y = nn::scaled_dot_product_attention(s->q, s->k, s->v, opt).out;
    }
    y.backward(s->dy);
  };
  c.teardown = [s] { *s = BandState{}; };
  return c;
}

}  // namespace

std::vector<BenchCase> w9_cases() {
  std::vector<BenchCase> cases;
  for (int64_t t : {512, 1024, 2048, 4096, 8192, 16384}) {
    if (t <= 8192) cases.push_back(band_case(t, false));
    cases.push_back(band_case(t, true));
    cases.push_back(band_case(t, true, /*links=*/true));
  }
  return cases;
}

}  // namespace attn::bench
