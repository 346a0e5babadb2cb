#include "experiments/common/vit_figures.h"

#include "experiments/common/patch_positions.h"
#include "experiments/common/shapes_vit.h"
#include "experiments/kit/kit.h"

namespace attn::experiments {

AttentionDistance measure_distance(nn::VisionTransformer& m, const data::ImageBatch& set) {
  const auto& o = m.options();
  AttentionDistance d(o.num_layers, o.nhead, o.grid(), o.patch_size);
  const Tensor ink = data::patches_above(set.clean, o.patch_size, 0.5f);
  const int64_t n = o.num_patches();
  visit_attention(m, set, [&](int64_t start, const std::vector<Tensor>& w) {
    Tensor rows({w[0].size(0), n});
    std::copy(ink.data() + start * n, ink.data() + (start + rows.size(0)) * n, rows.data());
    for (size_t l = 0; l < w.size(); ++l) d.add(static_cast<int64_t>(l), w[l], &rows);
  });
  return d;
}

void report_distance(const AttentionDistance& d,
                     double uniform,
                     double local_fraction,
                     RunContext& ctx) {
  std::vector<std::string> header{"layer"};
  for (int64_t h = 0; h < d.heads(); ++h) header.push_back(fmt::format("head {}", h + 1));
  header.insert(header.end(),
                {"mean", "mean / uniform", "on [CLS]", "on ink", "[CLS] query on ink"});
  Table t(fmt::format("Mean attention distance in pixels (uniform attention: {:.2f}) and where the "
                      "attention goes (shares; {:.3f} of the patches hold ink)",
                      uniform, d.ink_fraction()),
          header);
  LinePlot p = kit::line_plot("Mean attention distance of each head, by layer", "layer",
                              "mean attention distance (pixels)");
  nlohmann::ordered_json js = nlohmann::ordered_json::array();
  Series mean{"mean over heads", {}, {}, "#333333", true, false};
  for (int64_t l = 0; l < d.layers(); ++l) {
    std::vector<std::string> cells{std::to_string(l + 1)};
    Series heads{fmt::format("layer {} heads", l + 1), {}, {}, "", false, true};
    std::vector<double> per_head, cls, ink, cls_ink;
    for (int64_t h = 0; h < d.heads(); ++h) {
      per_head.push_back(d.mean(l, h));
      cls.push_back(d.cls_mass(l, h));
      ink.push_back(d.ink_mass(l, h));
      cls_ink.push_back(d.cls_ink_mass(l, h));
      cells.push_back(fixed(d.mean(l, h), 2));
      heads.x.push_back(static_cast<double>(l + 1));
      heads.y.push_back(d.mean(l, h));
    }
    cells.insert(cells.end(), {fixed(d.layer_mean(l), 2), fixed(d.layer_mean(l) / uniform, 3),
                               fixed(kit::mean_of(cls), 3), fixed(kit::mean_of(ink), 3),
                               fixed(kit::mean_of(cls_ink), 3)});
    t.add_row(cells);
    p.series.push_back(heads);
    mean.x.push_back(static_cast<double>(l + 1));
    mean.y.push_back(d.layer_mean(l));
    js.push_back({{"layer", l + 1},
                  {"heads", per_head},
                  {"cls_mass", cls},
                  {"ink_mass", ink},
                  {"cls_ink_mass", cls_ink}});
  }
  p.series.push_back(mean);
  p.refs = {{RefLine::kHorizontal, uniform, "uniform attention"},
            {RefLine::kHorizontal, local_fraction * uniform, "local below this"}};
  ctx.table(t);
  ctx.result("attention_distance", js);
  ctx.result("uniform_distance", uniform);
  ctx.result("ink_fraction", d.ink_fraction());
  ctx.figure("attention_distance", line_plot_svg(p),
             "Each dot is one head: the attention-weighted mean pixel distance between a query "
             "patch and the patches it attends to, over held-out images (the ViT paper's Fig. 7 "
             "measure). The dashed line is the mean over the heads of a layer.");
}

void report_cls_maps(nn::VisionTransformer& m,
                     const data::ImageBatch& set,
                     const std::vector<data::ShapeClass>& classes,
                     RunContext& ctx) {
  const auto& o = m.options();
  const int64_t g = o.grid(), s = o.image_size, n = set.images.size(0);
  std::vector<Heatmap> maps, images;
  for (data::ShapeClass c : classes) {
    int64_t pick = -1;
    for (int64_t i = 0; i < n && pick < 0; ++i)
      if (static_cast<int64_t>(set.labels[i]) == static_cast<int64_t>(c)) pick = i;
    if (pick < 0) continue;
    const std::string name = data::shape_class_names()[static_cast<size_t>(c)];
    data::ImageBatch one{Tensor({1, 1, s, s}), Tensor({1})};
    std::copy(set.images.data() + pick * s * s, set.images.data() + (pick + 1) * s * s,
              one.images.data());
    Heatmap img;
    img.values = one.images.reshape({s, s});
    img.title = fmt::format("held-out image {} ({})", pick, name);
    images.push_back(img);
    visit_attention(m, one, [&](int64_t, const std::vector<Tensor>& w) {
      for (size_t l = 0; l < w.size(); ++l) {
        Tensor grid = Tensor::zeros({g, g});
        const int64_t t = 1 + g * g;
        for (int64_t h = 0; h < o.nhead; ++h)
          for (int64_t k = 0; k < g * g; ++k)
            grid[k] += w[l][h * t * t + 1 + k] / static_cast<real>(o.nhead);  // query 0 = [CLS]
        Heatmap hm;
        hm.values = grid;
        hm.title = fmt::format("{}: layer {}", name, l + 1);
        hm.x_label = "patch column";
        hm.y_label = "patch row";
        maps.push_back(hm);
      }
    });
  }
  if (maps.empty()) return;
  ctx.figure("examples", heatmap_grid_svg(images, static_cast<int>(images.size()), "Pixels"),
             "The held-out images whose [CLS] attention is shown next");
  ctx.figure("cls_attention",
             heatmap_grid_svg(maps, static_cast<int>(o.num_layers),
                              "[CLS] attention over the patches (mean over heads)"),
             "Where the [CLS] token, which the classifier reads, takes its information from: one "
             "row per image, one panel per layer, each cell a patch of the image above.");
}

LayoutLearned report_positions(const nn::VisionTransformer& m,
                               const nn::VisionTransformer& untrained,
                               RunContext& ctx) {
  const int64_t g = m.options().grid(), n = g * g;
  const Tensor sim = position_similarity(m.pos_embed.value());
  const Tensor sim0 = position_similarity(untrained.pos_embed.value());
  const LayoutLearned r{similarity_distance_correlation(sim, g),
                        similarity_distance_correlation(sim0, g), same_line_gap(sim, g),
                        same_line_gap(sim0, g)};
  std::vector<Heatmap> panels;
  for (int64_t i = 0; i < n; ++i) {
    Heatmap hm;
    hm.values = Tensor({g, g});
    std::copy(sim.data() + i * n, sim.data() + (i + 1) * n, hm.values.data());
    hm.title = fmt::format("patch ({},{})", i / g, i % g);
    hm.vmin = -1;
    hm.vmax = 1;
    panels.push_back(hm);
  }
  ctx.figure("position_similarity",
             heatmap_grid_svg(panels, static_cast<int>(g),
                              "Cosine similarity of the learned position embeddings"),
             "Panel (r,c): how alike patch (r,c)'s position embedding is to every patch's (cosine "
             "of the centred embeddings). Nothing tells the model where a patch is; a bright row "
             "and column through each panel's own patch means it learned the grid's rows and "
             "columns from the data.");
  ctx.result("position_distance_correlation", r.trained);
  ctx.result("position_distance_correlation_init", r.initial);
  ctx.result("position_same_line_gap", r.line_trained);
  ctx.result("position_same_line_gap_init", r.line_initial);
  ctx.note(fmt::format(
      "Correlation between the position embeddings' cosine similarity (centred embeddings) and "
      "the patches' distance on the grid: {:.3f} after training, {:.3f} at initialisation "
      "(negative: nearby patches have alike embeddings). Mean similarity within a row or column "
      "minus elsewhere: {:.3f} after training, {:.3f} at initialisation.",
      r.trained, r.initial, r.line_trained, r.line_initial));
  return r;
}

}  // namespace attn::experiments
