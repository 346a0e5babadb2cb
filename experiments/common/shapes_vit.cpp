#include "experiments/common/shapes_vit.h"

#include "experiments/kit/kit.h"

namespace attn::experiments {

namespace {

// Images [start, start + n) of the set as a new (n,C,S,S) tensor.
Tensor image_rows(const Tensor& images, int64_t start, int64_t n) {
  Shape shape = images.shape();
  shape[0] = n;
  Tensor out(shape);
  const int64_t per = images.numel() / images.size(0);
  std::copy(images.data() + start * per, images.data() + (start + n) * per, out.data());
  return out;
}

}  // namespace

ShapesVitRun train_shapes_vit(const ShapesVitSettings& s) {
  Generator init(s.seed), data_gen(s.seed + 1);
  const data::ShapesDataset shapes(s.data);
  ShapesVitRun run;
  run.model = std::make_shared<nn::VisionTransformer>(s.model, init);
  run.model->train();
  train::FitSettings fs;
  fs.name = fmt::format("vit patch {}", s.model.patch_size);
  fs.steps = s.steps;
  fs.batch_size = s.batch;
  fs.optimizer = {.lr = s.lr, .schedule = "cosine", .warmup = s.warmup};  // Adam
  const train::TrainResult r = train::fit(*run.model, fs, [&](const train::BatchPart& part) {
    const data::ImageBatch b = shapes.sample(s.batch, data_gen);
    return train::StepLoss{
        cross_entropy(run.model->forward(Var::constant(part.rows(b.images))), part.rows(b.labels))};
  });
  run.losses = r.losses;
  run.seconds = r.wall_seconds;
  return run;
}

void visit_attention(nn::VisionTransformer& model,
                     const data::ImageBatch& set,
                     const std::function<void(int64_t, const std::vector<Tensor>&)>& visit,
                     int64_t chunk) {
  NoGrad off;
  model.eval();
  const int64_t n = set.images.size(0);
  for (int64_t start = 0; start < n; start += chunk) {
    const int64_t m = std::min(chunk, n - start);
    model.forward(Var::constant(image_rows(set.images, start, m)));
    visit(start, model.attention_weights());
  }
  model.train();
}

ShapesScore score_shapes(nn::VisionTransformer& model, const data::ImageBatch& set) {
  NoGrad off;
  model.eval();
  const int64_t n = set.images.size(0), classes = model.options().num_classes, chunk = 250;
  std::vector<int64_t> right(static_cast<size_t>(classes), 0),
      seen(static_cast<size_t>(classes), 0);
  ShapesScore sc;
  for (int64_t start = 0; start < n; start += chunk) {
    const int64_t m = std::min(chunk, n - start);
    const Tensor logits = model.forward(Var::constant(image_rows(set.images, start, m))).value();
    for (int64_t i = 0; i < m; ++i) {
      const real* row = logits.data() + i * classes;
      const int64_t guess = std::max_element(row, row + classes) - row;
      const auto label = static_cast<int64_t>(set.labels[start + i]);
      sc.predictions.push_back(guess);
      ++seen[static_cast<size_t>(label)];
      right[static_cast<size_t>(label)] += guess == label;
    }
  }
  model.train();
  int64_t total = 0;
  for (int64_t c = 0; c < classes; ++c) {
    const auto k = static_cast<size_t>(c);
    total += right[k];
    sc.per_class.push_back(seen[k] ? static_cast<double>(right[k]) / static_cast<double>(seen[k])
                                   : 0.0);
  }
  sc.accuracy = static_cast<double>(total) / static_cast<double>(n);
  return sc;
}

data::ImageBatch shuffle_each(const data::ImageBatch& set, int64_t patch_size, Generator& gen) {
  const int64_t n = set.images.size(0), grid = set.images.size(2) / patch_size;
  const bool clean = set.clean.shape() == set.images.shape();
  data::ImageBatch out{Tensor(set.images.shape()), set.labels,
                       clean ? Tensor(set.clean.shape()) : Tensor()};
  const int64_t per = set.images.numel() / n;
  for (int64_t i = 0; i < n; ++i) {
    const std::vector<int64_t> perm = data::random_permutation(grid * grid, gen);
    auto move = [&](const Tensor& from, Tensor& to) {
      const Tensor one = data::shuffle_patches(image_rows(from, i, 1), patch_size, perm);
      std::copy(one.data(), one.data() + per, to.data() + i * per);
    };
    move(set.images, out.images);
    if (clean) move(set.clean, out.clean);
  }
  return out;
}

}  // namespace attn::experiments
