#include "experiments/common/attention_distance.h"

#include "experiments/kit/kit.h"

namespace attn::experiments {

namespace {

// |c_i - c_j| in pixels for patches i and j of a grid x grid layout.
double patch_distance(int64_t i, int64_t j, int64_t grid, int64_t patch) {
  const auto dr = static_cast<double>(i / grid - j / grid);
  const auto dc = static_cast<double>(i % grid - j % grid);
  return static_cast<double>(patch) * std::hypot(dr, dc);
}

}  // namespace

AttentionDistance::AttentionDistance(int64_t layers, int64_t heads, int64_t grid, int64_t patch)
    : layers_(layers),
      heads_(heads),
      grid_(grid),
      patch_(patch),
      dist_sum_(static_cast<size_t>(layers * heads), 0.0),
      cls_sum_(static_cast<size_t>(layers * heads), 0.0),
      ink_sum_(static_cast<size_t>(layers * heads), 0.0),
      cls_ink_sum_(static_cast<size_t>(layers * heads), 0.0),
      count_(static_cast<size_t>(layers * heads), 0),
      cls_count_(static_cast<size_t>(layers * heads), 0) {}

size_t AttentionDistance::index(int64_t layer, int64_t head) const {
  if (layer < 0 || layer >= layers_ || head < 0 || head >= heads_)
    throw Error(fmt::format("AttentionDistance: layer {} head {} out of range ({} x {})", layer,
                            head, layers_, heads_));
  return static_cast<size_t>(layer * heads_ + head);
}

void AttentionDistance::add(int64_t layer, const Tensor& w, const Tensor* ink) {
  const int64_t n = grid_ * grid_, t = n + 1;
  if (w.rank() != 4 || w.size(1) != heads_ || w.size(2) != t || w.size(3) != t)
    throw Error(fmt::format("AttentionDistance::add: expected weights (B,{},{},{}), got {}", heads_,
                            t, t, shape_str(w.shape())));
  if (ink && (ink->rank() != 2 || ink->size(0) != w.size(0) || ink->size(1) != n))
    throw Error(fmt::format("AttentionDistance::add: expected ink ({},{}), got {}", w.size(0), n,
                            shape_str(ink->shape())));
  // Share of a row's patch attention on ink patches (0 without an ink mask).
  auto on_ink = [&](const real* row, int64_t b) {
    if (!ink) return 0.0;
    double mass = 0, inked = 0;
    for (int64_t j = 0; j < n; ++j) {
      mass += row[1 + j];
      inked += row[1 + j] * (*ink)[b * n + j];
    }
    return mass > 0 ? inked / mass : 0.0;
  };
  for (int64_t b = 0; b < w.size(0); ++b) {
    if (ink && layer == 0)
      for (int64_t j = 0; j < n; ++j) ink_patches_ += (*ink)[b * n + j], patches_ += 1;
    for (int64_t h = 0; h < heads_; ++h) {
      const size_t k = index(layer, h);
      const real* cls_row = w.data() + (b * heads_ + h) * t * t;  // query 0 = [CLS]
      cls_ink_sum_[k] += on_ink(cls_row, b);
      ++cls_count_[k];
      for (int64_t i = 0; i < n; ++i) {
        const real* row = cls_row + (1 + i) * t;  // query patch i
        double mass = 0, d = 0;
        for (int64_t j = 0; j < n; ++j) {
          mass += row[1 + j];
          d += row[1 + j] * patch_distance(i, j, grid_, patch_);
        }
        dist_sum_[k] += mass > 0 ? d / mass : 0.0;
        cls_sum_[k] += row[0];
        ink_sum_[k] += on_ink(row, b);
        ++count_[k];
      }
    }
  }
}

double AttentionDistance::mean(int64_t layer, int64_t head) const {
  const size_t k = index(layer, head);
  return count_[k] ? dist_sum_[k] / static_cast<double>(count_[k]) : 0.0;
}

double AttentionDistance::cls_mass(int64_t layer, int64_t head) const {
  const size_t k = index(layer, head);
  return count_[k] ? cls_sum_[k] / static_cast<double>(count_[k]) : 0.0;
}

double AttentionDistance::ink_mass(int64_t layer, int64_t head) const {
  const size_t k = index(layer, head);
  return count_[k] ? ink_sum_[k] / static_cast<double>(count_[k]) : 0.0;
}

double AttentionDistance::cls_ink_mass(int64_t layer, int64_t head) const {
  const size_t k = index(layer, head);
  return cls_count_[k] ? cls_ink_sum_[k] / static_cast<double>(cls_count_[k]) : 0.0;
}

double AttentionDistance::ink_fraction() const {
  return patches_ > 0 ? ink_patches_ / patches_ : 0.0;
}

double AttentionDistance::layer_mean(int64_t layer) const {
  double s = 0;
  for (int64_t h = 0; h < heads_; ++h) s += mean(layer, h);
  return s / static_cast<double>(heads_);
}

double uniform_attention_distance(int64_t grid, int64_t patch) {
  const int64_t n = grid * grid;
  double s = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) s += patch_distance(i, j, grid, patch);
  return s / static_cast<double>(n * n);
}

}  // namespace attn::experiments
