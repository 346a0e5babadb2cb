#include "experiments/efficient/linear_attention_equivalence.h"

#include "experiments/kit/kit.h"
#include "experiments/kit/max_abs.h"
#include "nn/attention/linear_attention.h"

namespace attn::experiments {

namespace {

// The output and the gradients of sum(y * w) of one form of linear attention.
struct FormResult {
  Tensor y, dq, dk, dv;
};

// form 0: parallel (fused op or composed), 1: fast-weight loop, 2: quadratic T x T (masked by
// `tril` when causal).
FormResult run_form(int form, bool causal, const std::vector<Tensor>& qkvw, const Var& tril) {
  Var q = Var::parameter(qkvw[0]), k = Var::parameter(qkvw[1]), v = Var::parameter(qkvw[2]);
  Var y;
  if (form == 0) {
    y = nn::linear_attention(q, k, v, causal);
  } else if (form == 1) {
    y = nn::linear_attention_recurrent(q, k, v);
  } else {
    Var a = matmul(nn::elu_feature_map(q), nn::elu_feature_map(k), false, true);  // (1,H,T,T)
    if (causal) a = mul(a, tril);
    y = div(matmul(a, v), add_scalar(sum(a, 3, true), static_cast<real>(1e-6)));
  }
  FormResult r{y.value(), {}, {}, {}};
  sum(mul(y, Var::constant(qkvw[3]))).backward();
  r.dq = q.grad();
  r.dk = k.grad();
  r.dv = v.grad();
  return r;
}

// max |difference| of the outputs and of each gradient.
std::vector<double> form_diffs(const FormResult& a, const FormResult& b) {
  return {max_abs_diff(a.y, b.y), max_abs_diff(a.dq, b.dq), max_abs_diff(a.dk, b.dk),
          max_abs_diff(a.dv, b.dv)};
}

// The fast-weight matrix after the last step against phi(K)^T V, the non-causal state:
// max |difference| and the state's largest entry.
std::pair<double, double> fast_weight_state_check(const Tensor& q0,
                                                  const Tensor& k0,
                                                  const Tensor& v0) {
  nn::FastWeightState st;
  {
    NoGrad off;
    const Var q = Var::constant(q0), k = Var::constant(k0), v = Var::constant(v0);
    for (int64_t i = 0; i < q0.size(2); ++i)
      nn::linear_attention_step(slice(q, 2, i, i + 1), slice(k, 2, i, i + 1), slice(v, 2, i, i + 1),
                                st);
  }
  const Tensor ktv =
      matmul(nn::elu_feature_map(Var::constant(k0)), Var::constant(v0), true, false).value();
  return {max_abs_diff(st.s.value(), ktv), kit::max_abs(ktv)};
}

}  // namespace

double equivalence_part(const Config& cfg, RunContext& ctx) {
  const int64_t t = cfg.get_int("equiv_t"), d = cfg.get_int("d"), h = cfg.get_int("equiv_heads");
  Generator gen(ctx.seed() + 1);
  std::vector<Tensor> qkvw;  // q, k, v and w, each (1,H,T,d)
  for (int i = 0; i < 4; ++i) qkvw.push_back(Tensor::randn({1, h, t, d}, gen));
  Tensor tril = Tensor::zeros({t, t});
  for (int64_t i = 0; i < t; ++i)
    for (int64_t j = 0; j <= i; ++j) tril[i * t + j] = 1;
  const Var mask = Var::constant(tril);
  const FormResult par = run_form(0, true, qkvw, mask), rec = run_form(1, true, qkvw, mask),
                   quad = run_form(2, true, qkvw, mask);
  const FormResult par_nc = run_form(0, false, qkvw, mask),
                   quad_nc = run_form(2, false, qkvw, mask);
  const std::vector<double> pr = form_diffs(par, rec), pq = form_diffs(par, quad),
                            nc = form_diffs(par_nc, quad_nc);
  const auto [state_diff, state_scale] = fast_weight_state_check(qkvw[0], qkvw[1], qkvw[2]);
  const double y_scale = kit::max_abs(par.y), g_scale = kit::max_abs(par.dk);

  ctx.section(
      fmt::format("Fast weights = causal linear attention (T = {}, {} heads, d = {})", t, h, d));
  Table tab("max |difference| against the parallel form (float32)",
            {"pair", "outputs y", "dL/dq", "dL/dk", "dL/dv"});
  auto row = [&](const std::string& name, const std::vector<double>& x) {
    tab.add_row({name, sig(x[0], 2), sig(x[1], 2), sig(x[2], 2), sig(x[3], 2)});
  };
  row("causal: fast-weight loop vs prefix sums", pr);
  row("causal: T x T masked kernel vs prefix sums", pq);
  row("non-causal: T x T kernel vs phi(Q)(phi(K)^T V)", nc);
  ctx.table(tab);
  ctx.note(fmt::format(
      "L = sum(y * w) for a fixed random w. For scale: max |y| = {:.3g}, max |dL/dk| = {:.3g}. "
      "After the last step the fast-weight matrix S_T (entries up to {:.3g}) differs from "
      "phi(K)^T V by {:.2g}, a relative {:.1g}: the 1991 memory written by outer products is "
      "the matrix linear attention reads.",
      y_scale, g_scale, state_scale, state_diff, state_diff / state_scale));
  const char* names[] = {"y", "dq", "dk", "dv"};
  for (int i = 0; i < 4; ++i) {
    ctx.result(fmt::format("diff_recurrent_vs_parallel_{}", names[i]), pr[i]);
    ctx.result(fmt::format("diff_quadratic_vs_parallel_{}", names[i]), pq[i]);
    ctx.result(fmt::format("diff_noncausal_quadratic_vs_parallel_{}", names[i]), nc[i]);
  }
  ctx.result("diff_fast_weight_state_vs_KtV", state_diff);
  ctx.result("relative_diff_fast_weight_state_vs_KtV", state_diff / state_scale);
  ctx.result("equiv_max_abs_y", y_scale);
  return pr[0];
}

}  // namespace attn::experiments
