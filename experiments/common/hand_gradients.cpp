#include "experiments/common/hand_gradients.h"

#include "experiments/common/attention_steps.h"
#include "experiments/kit/kit.h"

namespace attn::experiments {

namespace {

Matrix from_tensor(const Tensor& t) {
  Matrix m{t.size(0), t.size(1), {}};
  for (int64_t i = 0; i < t.numel(); ++i) m.v.push_back(t[i]);
  return m;
}

Tensor to_tensor(const Matrix& m) {
  return matrix_from(m.rows, m.cols, m.v);
}

// a (or a^T when ta) times b (or b^T when tb).
Matrix product(const Matrix& a, const Matrix& b, bool ta = false, bool tb = false) {
  const int64_t m = ta ? a.cols : a.rows, k = ta ? a.rows : a.cols, n = tb ? b.rows : b.cols;
  Matrix c{m, n, std::vector<double>(static_cast<size_t>(m * n), 0.0)};
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t l = 0; l < k; ++l)
        s += (ta ? a.at(l, i) : a.at(i, l)) * (tb ? b.at(j, l) : b.at(l, j));
      c.v[i * n + j] = s;
    }
  return c;
}

Matrix scaled(Matrix m, double s) {
  for (double& e : m.v) e *= s;
  return m;
}

Matrix plus(Matrix a, const Matrix& b) {
  for (size_t i = 0; i < a.v.size(); ++i) a.v[i] += b.v[i];
  return a;
}

// Row-wise softmax with std::exp, max-subtracted.
Matrix softmax_rows(const Matrix& s) {
  Matrix a = s;
  for (int64_t r = 0; r < s.rows; ++r) {
    double mx = -std::numeric_limits<double>::infinity(), sum = 0;
    for (int64_t c = 0; c < s.cols; ++c) mx = std::max(mx, s.at(r, c));
    for (int64_t c = 0; c < s.cols; ++c) sum += a.v[r * s.cols + c] = std::exp(s.at(r, c) - mx);
    for (int64_t c = 0; c < s.cols; ++c) a.v[r * s.cols + c] /= sum;
  }
  return a;
}

// dS = A o (dA - rowsum(dA o A)).
Matrix softmax_backward(const Matrix& a, const Matrix& da) {
  Matrix ds = a;
  for (int64_t r = 0; r < a.rows; ++r) {
    double dot = 0;
    for (int64_t c = 0; c < a.cols; ++c) dot += da.at(r, c) * a.at(r, c);
    for (int64_t c = 0; c < a.cols; ++c) ds.v[r * a.cols + c] = a.at(r, c) * (da.at(r, c) - dot);
  }
  return ds;
}

double max_abs_diff(const Tensor& t, const Matrix& m) {
  double worst = 0;
  for (int64_t i = 0; i < t.numel(); ++i) worst = std::max(worst, std::abs(t[i] - m.v[i]));
  return worst;
}

double max_abs(const Matrix& m) {
  double worst = 0;
  for (double e : m.v) worst = std::max(worst, std::abs(e));
  return worst;
}

}  // namespace

HandAttention hand_attention(const HandGradientInputs& in) {
  HandAttention h;
  const Matrix x = from_tensor(in.x);
  const Matrix wq = from_tensor(in.w_q), wk = from_tensor(in.w_k), wv = from_tensor(in.w_v);
  h.q = product(x, wq), h.k = product(x, wk), h.v = product(x, wv);
  h.scores = scaled(product(h.q, h.k, false, true), in.scale);
  h.a = softmax_rows(h.scores);
  h.out = product(h.a, h.v);
  h.d_out = from_tensor(in.g);
  h.d_v = product(h.a, h.d_out, true, false);                       // A^T dOut
  h.d_a = product(h.d_out, h.v, false, true);                       // dOut V^T
  h.d_scores = softmax_backward(h.a, h.d_a);                        // A o (dA - rowsum(dA o A))
  h.d_q = scaled(product(h.d_scores, h.k), in.scale);               // scale dS K
  h.d_k = scaled(product(h.d_scores, h.q, true, false), in.scale);  // scale dS^T Q
  h.d_x = plus(plus(product(h.d_q, wq, false, true), product(h.d_k, wk, false, true)),
               product(h.d_v, wv, false, true));  // dQ W_Q^T + dK W_K^T + dV W_V^T
  return h;
}

void report_hand_gradients(RunContext& ctx, const HandGradientInputs& in) {
  const int64_t t = in.x.size(0), d = in.x.size(1);
  if (in.g.shape() != Shape{t, d})
    throw UsageError(
        fmt::format("--g: the upstream gradient G must be T x d_model = {} x {} "
                    "numbers, got {}",
                    t, d, in.g.numel()));
  const HandAttention h = hand_attention(in);

  // The tape: X a leaf; every other step one op whose output we keep to read its gradient.
  Var X = Var::parameter(in.x, "X");
  Var Q = matmul(X, Var::constant(in.w_q)), K = matmul(X, Var::constant(in.w_k));
  Var V = matmul(X, Var::constant(in.w_v));
  AttentionSteps s = attention_steps(Q, K, V, in.scale);
  Var loss = sum(mul(s.out, Var::constant(in.g)));
  ctx.note(
      "The tape of L = sum(out o G), in execution order; backward walks it from the last record "
      "to the first:");
  ctx.preformatted(tape().to_string());
  loss.backward();

  ctx.note(
      "The closed forms, computed in double precision with plain loops (no tape, no library "
      "op):\n"
      "  dL/dout = G\n"
      "  dV = A^T dOut        dA = dOut V^T\n"
      "  dS = A o (dA - rowsum(dA o A))      (softmax's derivative, row by row)\n"
      "  dQ = s dS K          dK = s dS^T Q      (s = the scores' scale)\n"
      "  dX = dQ W_Q^T + dK W_K^T + dV W_V^T   (X reaches L through Q, K and V)");
  const std::vector<std::string> dims = index_labels(d, "dim "), keys = in.tokens;
  struct Row {
    const char* name;
    const char* formula;
    const Var* tape;
    const Matrix* hand;
    bool square;  // (T,T) rather than (T,d)
  };
  const Row rows[] = {{"out", "G", &s.out, &h.d_out, false},
                      {"A", "dOut V^T", &s.weights, &h.d_a, true},
                      {"scores", "A o (dA - rowsum(dA o A))", &s.scores, &h.d_scores, true},
                      {"Q", "s dS K", &Q, &h.d_q, false},
                      {"K", "s dS^T Q", &K, &h.d_k, false},
                      {"V", "A^T dOut", &V, &h.d_v, false},
                      {"X", "dQ W_Q^T + dK W_K^T + dV W_V^T", &X, &h.d_x, false}};
  Table summary("dL/d(tensor): the tape's gradient against the closed form (double precision)",
                {"tensor", "closed form", "max |tape - hand|", "max |hand|"});
  double worst = 0, scale = 1;
  for (const Row& r : rows) {
    const Tensor tape_grad = r.tape->grad();
    const double diff = max_abs_diff(tape_grad, *r.hand);
    worst = std::max(worst, diff), scale = std::max(scale, max_abs(*r.hand));
    summary.add_row(
        {r.name, r.formula, fmt::format("{:.2e}", diff), fmt::format("{:.4f}", max_abs(*r.hand))});
    ctx.result(std::string("grad_max_diff_") + r.name, diff);
    const auto& cols = r.square ? keys : dims;
    ctx.matrix(fmt::format("dL/d{} (tape)", r.name), tape_grad, keys, cols, 4);
    ctx.matrix(fmt::format("dL/d{} (by hand)", r.name), to_tensor(*r.hand), keys, cols, 4);
  }
  ctx.table(summary);
  ctx.result("hand_vs_tape_max_diff", worst);
  // float32 against double on a 3-token example: a few units of float rounding per step, about
  // ten steps; 1e-5 of the largest gradient is far above that and far below any real mistake.
  const double tol = 1e-5 * scale;
  ctx.result("hand_gradients_agree", worst <= tol);
  if (worst > tol)
    throw Error(
        fmt::format("the tape's gradients differ from the closed forms by {:.3e} "
                    "(allowed {:.1e}): a backward() is wrong",
                    worst, tol));
  ctx.note(
      fmt::format("Every gradient agrees with its closed form to {:.1e} (float32 tape "
                  "against double precision).",
                  worst));
}

}  // namespace attn::experiments
