// Registry rows for the state-space ops: softplus (the S6 step size) and the fused selective scan
// (autograd/ops/fused/selective_scan.cpp).
//
// PyTorch has no selective scan, so its row's expression is the closed form of the recurrence
// rather than a loop: with S_t = sum_{s<=t} delta_s (a cumulative sum over time),
//   h_t[e,n] = sum_{s<=t} exp(A[e,n] (S_t - S_s)[e]) delta_s[e] u_s[e] B_s[n],
//   y_t[e]   = sum_n C_t[n] h_t[e,n] + D[e] u_t[e],
// a (B,T,T,E,N) tensor masked to s <= t and contracted with einsum. It shares no code path with
// the chunked scan, so agreement checks the scan itself.
#include <string>

#include "autograd/registry/registry.h"

namespace attn {

namespace {

constexpr const char* kScanClosedForm =
    "(lambda s: torch.einsum('btn,btsen,bse,bsn->bte', c, "
    "torch.exp((s[:, :, None, :, None] - s[:, None, :, :, None]) * a) * "
    "torch.ones(s.shape[1], s.shape[1]).tril()[None, :, :, None, None], delta * u, b) + d * u)"
    "(delta.cumsum(1))";

// u, delta (2,T,3), A (3,4) < 0, B, C (2,T,4), D (3); delta in [0.1, 1) as softplus outputs.
std::vector<CaseInput> scan_inputs(Generator& g, int64_t t_len) {
  Tensor a = Tensor::rand({3, 4}, g, 0.5, 2.0);
  for (int64_t i = 0; i < a.numel(); ++i) a[i] = -a[i];
  return {float_input("u", Tensor::randn({2, t_len, 3}, g)),
          float_input("delta", Tensor::rand({2, t_len, 3}, g, 0.1, 1.0)),
          float_input("a", a),
          float_input("b", Tensor::randn({2, t_len, 4}, g)),
          float_input("c", Tensor::randn({2, t_len, 4}, g)),
          float_input("d", Tensor::randn({3}, g))};
}

void scan_row(std::vector<OpCase>& rows, const std::string& name, int64_t t_len, int64_t chunk) {
  rows.push_back({name, kScanClosedForm, [t_len](Generator& g) { return scan_inputs(g, t_len); },
                  [chunk](const std::vector<Var>& v) {
                    return selective_scan(v[0], v[1], v[2], v[3], v[4], v[5], chunk);
                  }});
}

}  // namespace

std::vector<OpCase> ssm_op_cases() {
  std::vector<OpCase> rows;
  rows.push_back({"softplus", "F.softplus(x)",
                  [](Generator& g) {
                    return std::vector{float_input("x", Tensor::randn({2, 3, 4}, g, 3.0))};
                  },
                  [](const std::vector<Var>& v) { return softplus(v[0]); }});
  scan_row(rows, "selective_scan", 7, 64);         // one chunk: the plain scan
  scan_row(rows, "selective_scan_chunked", 7, 3);  // chunks 3 + 3 + 1, chained
  scan_row(rows, "selective_scan_chunk1", 5, 1);   // every step its own chunk
  return rows;
}

}  // namespace attn
