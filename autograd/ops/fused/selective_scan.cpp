// SelectiveScanOp: the S6 (Mamba) recurrence over a whole sequence in one op, chunked over time.
//
// Replaces: the sequential scan of nn/ssm/selective_scan_reference.h, which records 15 ops per
// time step (4 slices, 3 reshapes, mul + exp for the decay, 2 muls for the input, mul + add for
// the state, a matmul and a reshape for the output), each with its own (B,E,N) or smaller
// temporary. Here one record, no per-step temporaries, and the (B,T,E,N) states are never
// stored: the backward recomputes them chunk by chunk from the saved chunk-boundary states.
// Measured gain (W10, forward + backward of the scan, B 4, E 64, N 16, 2 threads;
// docs/performance.md "Selective scan"): 5.3x at T = 64, 6.3x / 14.7x at T = 256 and
// 8.5x / 10.3x at T = 1024 (chunks of 64 / one chunk), and 4-10x less tensor memory.
//
// The recurrence, per batch row, channel e and state n (A is diagonal, so every (e, n) pair is
// its own scalar recurrence):
//   a_t = exp(delta_t[e] A[e,n])                 (zero-order hold of dh/dt = A h)
//   h_t = a_t h_{t-1} + delta_t[e] B_t[n] u_t[e],   h_0 = 0
//   y_t[e] = sum_n C_t[n] h_t[e,n] + D[e] u_t[e]
//
// Chunked scan (reduce, chain, fix up). Time is cut into chunks of L steps. Within chunk c the
// state is the part that started inside the chunk plus the decayed state that entered it:
//   h_t = hloc_t + exp(A S_t) H_c,   S_t = sum_{s in c, s <= t} delta_s   (cumulative log-decay)
// where hloc is the scan of chunk c alone from a zero state and H_c = h_{first(c) - 1}.
//   pass 1 (every chunk at once): hloc over the chunk, its end state, S at the chunk's end, and
//          the outputs' local part y_t = C_t . hloc_t + D u_t;
//   pass 2 (a scan over chunks, T/L steps): H_{c+1} = exp(A S_end(c)) H_c + hloc_end(c);
//   pass 3 (every chunk at once, each time step on its own): y_t += C_t . (exp(A S_t) H_c).
// Passes 1 and 3 are parallel over batch rows and chunks; pass 3's steps need only the prefix
// sum S_t, not each other. Why this and not a Blelloch tree or Mamba-2's within-chunk matrix: on
// a CPU both add work (a tree does 2x the combines, the matrix form O(L^2) per chunk) and
// Mamba-2's form needs a scalar decay per head, while S6's decay differs per (e, n); reduce /
// chain / fix-up keeps O(T E N) work, parallelises over chunks when the batch is small, and only
// ever exponentiates non-positive numbers (A < 0, delta > 0), so nothing overflows.
//
// Saved for backward: the inputs, the states entering every chunk H_c (B,chunks,E,N) and the
// chunk sums of delta (B,chunks,E). That is O(B T E N / L) memory instead of O(B T E N).
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/parallel.h"
#include "autograd/kernels/vec_math.h"

namespace attn {

namespace {

// w[e,n] = exp(scale[e] A[e,n]) for every (e, n) of one time step (or one chunk): the decays.
// The products go to w first and kernels::vexp_n exponentiates the E N of them in one
// vectorised loop (vexp inlined here would stay scalar: see vec_math.h on -fno-trapping-math).
void decays(const real* scale, const real* a, int64_t e_dim, int64_t n_dim, real* w) {
  for (int64_t e = 0; e < e_dim; ++e)
    for (int64_t n = 0; n < n_dim; ++n) w[e * n_dim + n] = scale[e] * a[e * n_dim + n];
  kernels::vexp_n(w, w, e_dim * n_dim);
}

// sum_n c[n] h[n] over one channel's N states.
real state_dot(const real* c, const real* h, int64_t n_dim) {
  real acc = 0;
#pragma omp simd reduction(+ : acc)
  for (int64_t n = 0; n < n_dim; ++n) acc += c[n] * h[n];
  return acc;
}

}  // namespace

struct SelectiveScanOp final : Op {
  Tensor u, delta, a, bm, cm, dskip;  // inputs (shared storage): u, delta, A, B, C, D
  Tensor h_in;                        // (B,chunks,E,N): the state entering each chunk
  Tensor delta_sum;                   // (B,chunks,E): sum of delta over each chunk
  int64_t batch = 0, t_len = 0, e_dim = 0, n_dim = 0, chunk = 1, chunks = 0;

  // u (B,T,E), delta (B,T,E), a (E,N), bm (B,T,N), cm (B,T,N), dskip (E) -> y (B,T,E).
  Tensor forward(const Tensor& u_in,
                 const Tensor& delta_in,
                 const Tensor& a_in,
                 const Tensor& b_in,
                 const Tensor& c_in,
                 const Tensor& d_in,
                 int64_t chunk_in) {
    u = u_in, delta = delta_in, a = a_in, bm = b_in, cm = c_in, dskip = d_in, chunk = chunk_in;
    check_shapes();
    const int64_t E = e_dim, N = n_dim;
    Tensor y = Tensor::empty({batch, t_len, E});
    h_in = Tensor::zeros({batch, chunks, E, N});
    delta_sum = Tensor::zeros({batch, chunks, E});
    Tensor h_end = Tensor::zeros({batch, chunks, E, N});  // hloc at each chunk's last step
    const int64_t work = chunk * E * N * 12;

    // Pass 1: each chunk from a zero state. h = exp(delta A) h + delta B u; y = C . h + D u.
    kernels::parallel_for(batch * chunks, work, [&](int64_t job) {
      const int64_t b = job / chunks, t0 = (job % chunks) * chunk;
      const int64_t t1 = std::min(t_len, t0 + chunk);
      real* h = h_end.data() + job * E * N;
      real* dsum = delta_sum.data() + job * E;
      std::vector<real> decay(static_cast<size_t>(E * N));
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t bt = b * t_len + t;
        const real *ut = u.data() + bt * E, *dt = delta.data() + bt * E;
        const real *bn = bm.data() + bt * N, *cn = cm.data() + bt * N;
        real* yt = y.data() + bt * E;
        decays(dt, a.data(), E, N, decay.data());
        for (int64_t e = 0; e < E; ++e) {
          const real x = dt[e] * ut[e];
          const real* ae = decay.data() + e * N;
          real* he = h + e * N;
          for (int64_t n = 0; n < N; ++n) he[n] = ae[n] * he[n] + x * bn[n];
          dsum[e] += dt[e];
          yt[e] = state_dot(cn, he, N) + dskip[e] * ut[e];
        }
      }
    });

    // Pass 2: chain the chunks. H_{c+1} = exp(A S_end(c)) H_c + hloc_end(c), one (b, e) at a time.
    kernels::parallel_for(batch * E, chunks * N * 12, [&](int64_t job) {
      const int64_t b = job / E, e = job % E;
      const real* ae = a.data() + e * N;
      for (int64_t c = 1; c < chunks; ++c) {
        const int64_t prev = (b * chunks + c - 1) * E + e, cur = (b * chunks + c) * E + e;
        const real s = delta_sum[prev];
        const real* hp = h_in.data() + prev * N;
        const real* hl = h_end.data() + prev * N;
        real* hc = h_in.data() + cur * N;
        for (int64_t n = 0; n < N; ++n) hc[n] = kernels::vexp(s * ae[n]) * hp[n] + hl[n];
      }
    });

    // Pass 3: the entering state's share of every output, y_t += C_t . (exp(A S_t) H_c).
    kernels::parallel_for(batch * chunks, work, [&](int64_t job) {
      if (job % chunks == 0) return;  // the first chunk starts from h_0 = 0
      const int64_t b = job / chunks, t0 = (job % chunks) * chunk;
      const int64_t t1 = std::min(t_len, t0 + chunk);
      const real* hc = h_in.data() + job * E * N;
      std::vector<real> s(static_cast<size_t>(E), 0);  // S_t, the prefix sum of delta
      std::vector<real> decay(static_cast<size_t>(E * N));
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t bt = b * t_len + t;
        const real* dt = delta.data() + bt * E;
        const real* cn = cm.data() + bt * N;
        real* yt = y.data() + bt * E;
        for (int64_t e = 0; e < E; ++e) s[e] += dt[e];
        decays(s.data(), a.data(), E, N, decay.data());
        for (int64_t i = 0; i < E * N; ++i) decay[i] *= hc[i];  // exp(A S_t) H_c
        for (int64_t e = 0; e < E; ++e) yt[e] += state_dot(cn, decay.data() + e * N, N);
      }
    });
    return y;
  }

  // With g_t = dL/dh_t (everything that reaches h_t: its output and, through h_{t+1}, the rest):
  //   g_t = dy_t[e] C_t[n] + a_{t+1} g_{t+1}        (a reverse-time scan of the same kind)
  //   dC_t[n]    += sum_e dy_t[e] h_t[e,n]
  //   dD[e]      += sum_t dy_t[e] u_t[e],     du_t[e] += dy_t[e] D[e]
  //   through h_t = a_t h_{t-1} + delta_t B_t u_t, with da_t = g_t h_{t-1} and
  //   a_t = exp(delta_t A):  d(delta_t A) = da_t a_t, so
  //   ddelta_t[e] += sum_n g_t h_{t-1} a_t A[e,n] + u_t[e] sum_n g_t B_t[n]
  //   dA[e,n]     += sum_t g_t h_{t-1} a_t delta_t[e]
  //   du_t[e]     += delta_t[e] sum_n g_t B_t[n],   dB_t[n] += sum_e g_t delta_t[e] u_t[e]
  // The reverse scan is chunked as the forward: Q_c = a_first(c) gloc_first(c) from chunk c alone
  // (pass B1), then R_{c-1} = Q_c + exp(A S_end(c)) R_c chains the chunks from the right (B2),
  // R_c being what flows into chunk c's last step from later chunks. Pass B3 then recomputes
  // h_t inside each chunk from H_c and walks it backwards with g starting at R_c.
  void backward() override {
    const Tensor& g = dy();
    const int64_t E = e_dim, N = n_dim;
    Tensor du = Tensor::empty(u.shape()), ddelta = Tensor::empty(delta.shape());
    Tensor db = Tensor::zeros(bm.shape()), dc = Tensor::zeros(cm.shape());
    Tensor da_part = Tensor::zeros({batch * chunks, E, N});
    Tensor dd_part = Tensor::zeros({batch * chunks, E});
    Tensor right = Tensor::zeros({batch, chunks, E, N});  // R_c
    Tensor q = Tensor::zeros({batch, chunks, E, N});      // Q_c
    const int64_t work = chunk * E * N * 12;

    // B1: Q_c = a_first(c) g_first(c) with nothing flowing in from the right, for c >= 1.
    kernels::parallel_for(batch * chunks, work, [&](int64_t job) {
      if (job % chunks == 0) return;
      const int64_t b = job / chunks, t0 = (job % chunks) * chunk;
      const int64_t t1 = std::min(t_len, t0 + chunk);
      real* gl = q.data() + job * E * N;  // holds a_{t+1} g_{t+1}, then a_t g_t
      std::vector<real> decay(static_cast<size_t>(E * N));
      for (int64_t t = t1 - 1; t >= t0; --t) {
        const int64_t bt = b * t_len + t;
        const real* gt = g.data() + bt * E;
        const real* cn = cm.data() + bt * N;
        decays(delta.data() + bt * E, a.data(), E, N, decay.data());
        for (int64_t e = 0; e < E; ++e) {
          const real* ae = decay.data() + e * N;
          real* ge = gl + e * N;
          for (int64_t n = 0; n < N; ++n) ge[n] = (gt[e] * cn[n] + ge[n]) * ae[n];
        }
      }
    });

    // B2: R_{c-1} = Q_c + exp(A S_end(c)) R_c, from the last chunk (R = 0) leftwards.
    kernels::parallel_for(batch * E, chunks * N * 12, [&](int64_t job) {
      const int64_t b = job / E, e = job % E;
      const real* ae = a.data() + e * N;
      for (int64_t c = chunks - 1; c >= 1; --c) {
        const int64_t cur = (b * chunks + c) * E + e, prev = (b * chunks + c - 1) * E + e;
        const real s = delta_sum[cur];
        const real *qc = q.data() + cur * N, *rc = right.data() + cur * N;
        real* rp = right.data() + prev * N;
        for (int64_t n = 0; n < N; ++n) rp[n] = qc[n] + kernels::vexp(s * ae[n]) * rc[n];
      }
    });

    // B3: per chunk, recompute h_t and a_t from H_c, then walk back with g (starting at R_c).
    kernels::parallel_for(batch * chunks, 2 * work, [&](int64_t job) {
      const int64_t b = job / chunks, t0 = (job % chunks) * chunk;
      const int64_t t1 = std::min(t_len, t0 + chunk), steps = t1 - t0;
      // The chunk's states and decays, (steps,E,N) each. Tensors, so the buffer pool serves
      // them again next call (a fresh multi-MiB std::vector per call cost a page fault per
      // 4 KiB: a quarter of the backward's time at T = 1024 in one chunk) and the peak tensor
      // memory counts them.
      Tensor hs_t = Tensor::empty({steps, E, N}), as_t = Tensor::empty({steps, E, N});
      real *hs = hs_t.data(), *as = as_t.data();
      const real* h0 = h_in.data() + job * E * N;
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t bt = b * t_len + t;
        const real *ut = u.data() + bt * E, *dt = delta.data() + bt * E;
        const real* bn = bm.data() + bt * N;
        const real* hp = t == t0 ? h0 : hs + (t - t0 - 1) * E * N;
        real* ht = hs + (t - t0) * E * N;
        real* at = as + (t - t0) * E * N;
        decays(dt, a.data(), E, N, at);
        for (int64_t e = 0; e < E; ++e) {
          const real x = dt[e] * ut[e];
          for (int64_t n = 0; n < N; ++n) {
            const int64_t i = e * N + n;
            ht[i] = at[i] * hp[i] + x * bn[n];
          }
        }
      }
      std::vector<real> gc(right.data() + job * E * N, right.data() + (job + 1) * E * N);
      real* dA = da_part.data() + job * E * N;
      real* dD = dd_part.data() + job * E;
      for (int64_t t = t1 - 1; t >= t0; --t) {
        const int64_t bt = b * t_len + t;
        const real *ut = u.data() + bt * E, *dt = delta.data() + bt * E, *gt = g.data() + bt * E;
        const real *bn = bm.data() + bt * N, *cn = cm.data() + bt * N;
        const real* hp = t == t0 ? h0 : hs + (t - t0 - 1) * E * N;
        const real* ht = hs + (t - t0) * E * N;
        const real* at = as + (t - t0) * E * N;
        real *dbt = db.data() + bt * N, *dct = dc.data() + bt * N;
        for (int64_t e = 0; e < E; ++e) {
          const real de = dt[e], ue = ut[e], gy = gt[e], x = de * ue;
          real decay_sum = 0, gb_sum = 0;  // sum_n g h_{t-1} a_t A,  sum_n g B
#pragma omp simd reduction(+ : decay_sum, gb_sum)
          for (int64_t n = 0; n < N; ++n) {
            const int64_t i = e * N + n;
            const real gn = gy * cn[n] + gc[i];  // g_t
            dct[n] += gy * ht[i];
            const real dlog = gn * hp[i] * at[i];  // dL/d(delta_t A[e,n])
            decay_sum += dlog * a[i];
            dA[i] += dlog * de;
            gb_sum += gn * bn[n];
            dbt[n] += gn * x;
            gc[i] = gn * at[i];  // a_t g_t flows on to step t-1
          }
          dD[e] += gy * ue;
          ddelta[bt * E + e] = decay_sum + ue * gb_sum;
          du[bt * E + e] = gy * dskip[e] + de * gb_sum;
        }
      }
    });

    Tensor da = Tensor::zeros(a.shape()), dd = Tensor::zeros(dskip.shape());
    for (int64_t job = 0; job < batch * chunks; ++job) {
      for (int64_t i = 0; i < E * N; ++i) da[i] += da_part[job * E * N + i];
      for (int64_t e = 0; e < E; ++e) dd[e] += dd_part[job * E + e];
    }
    accumulate(0, du);
    accumulate(1, ddelta);
    accumulate(2, da);
    accumulate(3, db);
    accumulate(4, dc);
    accumulate(5, dd);
  }

  const char* name() const override {
    return "selective_scan";
  }

 private:
  void check_shapes() {
    const Shape &us = u.shape(), &ds = delta.shape(), &as = a.shape();
    const Shape &bs = bm.shape(), &cs = cm.shape(), &dks = dskip.shape();
    const bool ok = us.size() == 3 && ds == us && as.size() == 2 && as[0] == us[2] &&
                    bs.size() == 3 && bs[0] == us[0] && bs[1] == us[1] && bs[2] == as[1] &&
                    cs == bs && dks.size() == 1 && dks[0] == us[2];
    if (!ok)
      throw Error(fmt::format(
          "selective_scan: expected u (B,T,E), delta (B,T,E), A (E,N), B (B,T,N), C (B,T,N), "
          "D (E); got u {}, delta {}, A {}, B {}, C {}, D {}",
          shape_str(us), shape_str(ds), shape_str(as), shape_str(bs), shape_str(cs),
          shape_str(dks)));
    if (chunk < 1)
      throw Error(fmt::format("selective_scan: chunk must be at least 1, got {}", chunk));
    batch = us[0], t_len = us[1], e_dim = us[2], n_dim = as[1];
    chunks = (t_len + chunk - 1) / chunk;
  }
};

Var selective_scan(const Var& u,
                   const Var& delta,
                   const Var& a,
                   const Var& b,
                   const Var& c,
                   const Var& d,
                   int64_t chunk) {
  auto op = std::make_unique<SelectiveScanOp>();
  Tensor y =
      op->forward(u.value(), delta.value(), a.value(), b.value(), c.value(), d.value(), chunk);
  return record(std::move(op), {u, delta, a, b, c, d}, std::move(y));
}

}  // namespace attn
