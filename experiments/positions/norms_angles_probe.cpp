// norms-angles: reading q, k, |q|, |k|, cos θ and the attention rows of a trained causal LM
// (norms_angles.h). Step through read_head below: one head of one window, row by row.
#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/mode.h"
#include "data/batch.h"
#include "experiments/common/row_interventions.h"  // total_variation
#include "experiments/positions/norms_angles.h"
#include "nn/positional/rope.h"

namespace attn::experiments::norms {

namespace {

// Recomputed weights may differ from the layer's float32 ones by rounding only.
constexpr double kWeightsTolerance = 1e-4;

// The input of every block's attention, norm1(x) (B,T,E), the model's own forward replayed
// block by block (eval mode: dropout is the identity).
std::vector<Tensor> attention_inputs(nn::DecoderOnlyTransformer& model, const Tensor& ids) {
  nn::AttentionMasks causal;
  causal.causal = true;
  Var x = model.drop->forward(model.tok_emb->forward(ids));
  std::vector<Tensor> out;
  for (const auto& layer : *model.layers) {
    out.push_back(layer->norm1->forward(x).value());
    x = layer->forward(x, causal);
  }
  return out;
}

// part 0: the queries, part 1: the keys, (B,H,T,D), rotated when the layer uses RoPE:
// x W^T + b with W the part's rows of the projection, split into heads.
Tensor project_heads(const nn::MultiheadAttention& attn, const Tensor& a, int part) {
  const int64_t b = a.size(0), t = a.size(1), e = attn.embed_dim(), h = attn.num_heads();
  const int64_t d = e / h;
  const Tensor& w = attn.packed() ? attn.in_proj_weight.value()
                                  : (part == 0 ? attn.q_proj : attn.k_proj)->weight.value();
  const int64_t row0 = attn.packed() ? part * e : 0;
  const bool has_bias = attn.options().bias;
  const Tensor* bias = !has_bias       ? nullptr
                       : attn.packed() ? &attn.in_proj_bias.value()
                                       : &(part == 0 ? attn.q_proj : attn.k_proj)->bias.value();
  Tensor out({b, h, t, d});
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t ti = 0; ti < t; ++ti) {
      const real* x = a.data() + (bi * t + ti) * e;
      for (int64_t o = 0; o < e; ++o) {
        const real* wr = w.data() + (row0 + o) * e;
        double s = bias ? (*bias)[row0 + o] : 0.0;
        for (int64_t c = 0; c < e; ++c) s += static_cast<double>(x[c]) * wr[c];
        out[((bi * h + o / d) * t + ti) * d + o % d] = static_cast<real>(s);
      }
    }
  if (!attn.options().rope) return out;
  NoGrad off;
  return nn::apply_rope(Var::constant(out), 0, *attn.options().rope, attn.options().rope_base)
      .value();
}

std::vector<double> softmax(const std::vector<double>& s) {
  const double top = *std::max_element(s.begin(), s.end());
  std::vector<double> p(s.size());
  double z = 0;
  for (size_t j = 0; j < s.size(); ++j) z += (p[j] = std::exp(s[j] - top));
  for (double& x : p) x /= z;
  return p;
}

// Average ranks (ties share their mean rank), for Spearman's correlation.
std::vector<double> ranks(const std::vector<double>& x) {
  std::vector<size_t> order(x.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return x[a] < x[b]; });
  std::vector<double> r(x.size());
  for (size_t i = 0; i < order.size();) {
    size_t k = i;
    while (k + 1 < order.size() && x[order[k + 1]] == x[order[i]]) ++k;
    for (size_t m = i; m <= k; ++m) r[order[m]] = (static_cast<double>(i + k) / 2) + 1;
    i = k + 1;
  }
  return r;
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / static_cast<double>(ra.size());
  const double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / static_cast<double>(rb.size());
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < ra.size(); ++i)
    sab += (ra[i] - ma) * (rb[i] - mb), saa += (ra[i] - ma) * (ra[i] - ma),
        sbb += (rb[i] - mb) * (rb[i] - mb);
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 0;
}

double norm_of(const real* v, int64_t d) {
  double s = 0;
  for (int64_t c = 0; c < d; ++c) s += static_cast<double>(v[c]) * v[c];
  return std::sqrt(s);
}

// Running sums of one layer over its heads and windows, divided at the end.
struct LayerSums {
  double tv_norm = 0, tv_angle = 0, counter_rows = 0;
  double sink = 0, recent = 0, middle = 0, tv_uniform = 0, v_rows = 0;
  std::vector<double> rel_mass, rel_keys;
  double far_mass = 0, far_rows = 0;
  double max_weight_diff = 0;
};

// Row i of one head: scores, their check against the layer's weights `w_row`, and every
// statistic the row feeds.
void read_row(const real* q,
              const real* k,
              int64_t i,
              int64_t d,
              const real* w_row,
              const ProbeSettings& s,
              HeadReading& hr,
              LayerSums& sums,
              std::vector<double>& qn_rows,
              std::vector<double>& entropy_rows) {
  const int64_t len = s.train_len;
  const double qn = norm_of(q + i * d, d);
  std::vector<double> score(static_cast<size_t>(i + 1)), cosv(score.size()), kn(score.size());
  for (int64_t j = 0; j <= i; ++j) {
    double dot = 0;
    for (int64_t c = 0; c < d; ++c) dot += static_cast<double>(q[i * d + c]) * k[j * d + c];
    kn[j] = norm_of(k + j * d, d);
    cosv[j] = qn * kn[j] > 0 ? dot / (qn * kn[j]) : 0;
    score[j] = dot / std::sqrt(static_cast<double>(d));
    if (i < len || i - j >= len) {
      const auto bin = std::clamp(static_cast<int>((cosv[j] + 1) / 2 * kCosBins), 0, kCosBins - 1);
      (i < len ? hr.cos_in : hr.cos_far)[static_cast<size_t>(bin)] += 1;
    }
  }
  const std::vector<double> p = softmax(score);
  for (int64_t j = 0; j <= i; ++j)
    sums.max_weight_diff = std::max(sums.max_weight_diff, std::abs(p[j] - w_row[j]));
  if (i >= len) {
    for (int64_t j = 0; j <= i - len; ++j) sums.far_mass += p[j];
    sums.far_rows += 1;
    return;
  }
  if (i == 0) return;
  // Rows inside the training length: the within-row spread of cos θ, and the two rebuilds.
  const double n = static_cast<double>(i + 1);
  const double cbar = std::accumulate(cosv.begin(), cosv.end(), 0.0) / n;
  const double kbar = std::accumulate(kn.begin(), kn.end(), 0.0) / n;
  double var = 0;
  std::vector<double> norm_only(score.size()), angle_only(score.size());
  for (int64_t j = 0; j <= i; ++j) {
    var += (cosv[j] - cbar) * (cosv[j] - cbar);
    norm_only[j] = qn * kn[j] * cbar / std::sqrt(static_cast<double>(d));
    angle_only[j] = qn * kbar * cosv[j] / std::sqrt(static_cast<double>(d));
  }
  hr.cos_row_sd += std::sqrt(var / n);
  sums.tv_norm += total_variation(p, softmax(norm_only));
  sums.tv_angle += total_variation(p, softmax(angle_only));
  sums.counter_rows += 1;
  if (2 * i < len) return;
  // Rows len/2 <= i < len: entropy, and the mass on the first, the recent and the middle keys.
  double entropy = 0, recent = 0, middle = 0, tv_u = 0;
  for (int64_t j = 0; j <= i; ++j) {
    if (p[j] > 0) entropy -= p[j] * std::log(p[j]);
    tv_u += std::abs(p[j] - 1 / n) / 2;
    if (j > i - s.recent)
      recent += p[j];
    else if (j > 0)
      middle += p[j];
    const auto bin = static_cast<size_t>(static_cast<double>(j) / n * s.rel_bins);
    sums.rel_mass[bin] += p[j], sums.rel_keys[bin] += 1 / n;
  }
  qn_rows.push_back(qn);
  entropy_rows.push_back(entropy / std::log(n));
  sums.sink += p[0] * n;
  sums.recent += recent * n / static_cast<double>(s.recent);
  sums.middle += middle * n / (n - 1 - static_cast<double>(s.recent));
  sums.tv_uniform += tv_u;
  sums.v_rows += 1;
}

LayerReading read_layer(const Tensor& q,
                        const Tensor& k,
                        const Tensor& w,
                        const ProbeSettings& s,
                        int64_t layer_index) {
  const int64_t b = q.size(0), h = q.size(1), t = q.size(2), d = q.size(3);
  LayerReading lr;
  lr.heads.resize(static_cast<size_t>(h));
  LayerSums sums;
  sums.rel_mass.assign(static_cast<size_t>(s.rel_bins), 0.0);
  sums.rel_keys = sums.rel_mass;
  for (int64_t hi = 0; hi < h; ++hi) {
    HeadReading& hr = lr.heads[static_cast<size_t>(hi)];
    hr.cos_in.assign(kCosBins, 0.0), hr.cos_far.assign(kCosBins, 0.0);
    std::vector<double> qn_rows, entropy_rows;
    for (int64_t bi = 0; bi < b; ++bi) {
      const real* qh = q.data() + (bi * h + hi) * t * d;
      const real* kh = k.data() + (bi * h + hi) * t * d;
      for (int64_t i = 0; i < t; ++i) {
        (i < s.train_len ? hr.q_in : hr.q_out).push_back(norm_of(qh + i * d, d));
        (i < s.train_len ? hr.k_in : hr.k_out).push_back(norm_of(kh + i * d, d));
        read_row(qh, kh, i, d, w.data() + ((bi * h + hi) * t + i) * t, s, hr, sums, qn_rows,
                 entropy_rows);
      }
    }
    hr.entropy_rank_corr = spearman(qn_rows, entropy_rows);
    hr.cos_row_sd /= static_cast<double>(b * (std::min(t, s.train_len) - 1));
  }
  if (sums.max_weight_diff > kWeightsTolerance)
    throw Error(fmt::format(
        "norms-angles: layer {}: the recomputed attention weights differ from the layer's own by "
        "{:.2e} (more than {:.0e}): q and k were not read as the layer computes them",
        layer_index + 1, sums.max_weight_diff, kWeightsTolerance));
  lr.tv_norm_only = sums.tv_norm / sums.counter_rows;
  lr.tv_angle_only = sums.tv_angle / sums.counter_rows;
  lr.sink = sums.sink / sums.v_rows, lr.recent = sums.recent / sums.v_rows;
  lr.middle = sums.middle / sums.v_rows, lr.tv_uniform = sums.tv_uniform / sums.v_rows;
  lr.far_mass = sums.far_rows > 0 ? sums.far_mass / sums.far_rows : 0;
  for (size_t bin = 0; bin < sums.rel_mass.size(); ++bin)
    lr.by_relative.push_back(sums.rel_keys[bin] > 0 ? sums.rel_mass[bin] / sums.rel_keys[bin] : 0);
  return lr;
}

// Next-character accuracy and loss, positions < / >= train_len, and accuracy per bucket.
void score_positions(const Tensor& logits, const Tensor& targets, ModelReading& r, int64_t len) {
  const int64_t b = logits.size(0), t = logits.size(1), v = logits.size(2);
  for (int64_t start = 0; start < t; start = start == 0 ? len : 2 * start)
    r.bucket_starts.push_back(start);
  std::vector<double> right(r.bucket_starts.size(), 0), count(right.size(), 0);
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t i = 0; i < t; ++i) {
      const real* row = logits.data() + (bi * t + i) * v;
      const auto target = static_cast<int64_t>(targets[bi * t + i]);
      const double top = *std::max_element(row, row + v);
      double z = 0;
      for (int64_t c = 0; c < v; ++c) z += std::exp(static_cast<double>(row[c]) - top);
      const double loss = top + std::log(z) - row[target];
      const bool hit = std::max_element(row, row + v) - row == target;
      const bool in = i < len;
      (in ? r.loss_in : r.loss_out) += loss;
      (in ? r.accuracy_in : r.accuracy_out) += hit;
      ++(in ? r.scored_in : r.scored_out);
      const auto bucket =
          static_cast<size_t>(std::upper_bound(r.bucket_starts.begin(), r.bucket_starts.end(), i) -
                              r.bucket_starts.begin() - 1);
      right[bucket] += hit, count[bucket] += 1;
    }
  r.accuracy_in /= static_cast<double>(r.scored_in), r.loss_in /= static_cast<double>(r.scored_in);
  if (r.scored_out > 0)
    r.accuracy_out /= static_cast<double>(r.scored_out),
        r.loss_out /= static_cast<double>(r.scored_out);
  for (size_t k = 0; k < right.size(); ++k) r.accuracy_by_bucket.push_back(right[k] / count[k]);
}

}  // namespace

ModelReading read_model(nn::DecoderOnlyTransformer& model,
                        const std::vector<data::Example>& windows,
                        const ProbeSettings& settings) {
  const auto& o = model.options();
  if ((o.positions != nn::PositionKind::kRope && o.positions != nn::PositionKind::kNone) ||
      o.attention_window > 0 || !o.norm_first || !o.layer_norm ||
      (o.n_kv_heads != 0 && o.n_kv_heads != o.nhead))
    throw Error(
        "norms-angles: read_model needs pre-norm blocks with RoPE or no positions, full "
        "attention and one key head per query head");
  NoGrad off;
  model.eval();
  const data::Batch b = data::collate_language_model(windows);  // equal lengths: no padding
  const Tensor &ids = b.tgt_in, &targets = b.tgt_out;
  const std::vector<Tensor> inputs = attention_inputs(model, ids);
  ModelReading r;
  score_positions(model.forward(ids).value(), targets, r, settings.train_len);
  for (size_t l = 0; l < inputs.size(); ++l) {
    const nn::MultiheadAttention& attn = *(*model.layers)[l].self_attn;
    r.layers.push_back(read_layer(project_heads(attn, inputs[l], 0),
                                  project_heads(attn, inputs[l], 1), attn.last_weights(), settings,
                                  static_cast<int64_t>(l)));
  }
  model.train();
  return r;
}

double ks_samples(std::vector<double> a, std::vector<double> b) {
  std::sort(a.begin(), a.end()), std::sort(b.begin(), b.end());
  double best = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const double x = std::min(a[i], b[j]);
    while (i < a.size() && a[i] <= x) ++i;
    while (j < b.size() && b[j] <= x) ++j;
    best = std::max(best, std::abs(static_cast<double>(i) / static_cast<double>(a.size()) -
                                   static_cast<double>(j) / static_cast<double>(b.size())));
  }
  return best;
}

double ks_histograms(const CosHistogram& a, const CosHistogram& b) {
  const double na = std::accumulate(a.begin(), a.end(), 0.0);
  const double nb = std::accumulate(b.begin(), b.end(), 0.0);
  double fa = 0, fb = 0, best = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    fa += a[k] / na, fb += b[k] / nb;
    best = std::max(best, std::abs(fa - fb));
  }
  return best;
}

}  // namespace attn::experiments::norms
