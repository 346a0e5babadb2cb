// Training a Vision Transformer on the generated shapes (data/images/shapes.h) and scoring it:
// the work behind the vit-patches experiment.
//
//   ShapesVitSettings s;  s.model.patch_size = 4;  s.steps = 1500;  s.seed = 1;
//   ShapesVitRun run = train_shapes_vit(s);          // fresh images every step
//   data::ImageBatch held_out = data::ShapesDataset(s.data).sample(1000, eval_gen);
//   ShapesScore sc = score_shapes(*run.model, held_out);   // accuracy, per class
//   sc = score_shapes(*run.model, shuffle_each(held_out, 4, gen));   // patches shuffled
//
// Training: cross-entropy on batches drawn fresh from the generator each step (an endless
// supply of images, the "sufficient data" regime), Adam with linear warm-up then cosine decay
// to zero. Scoring runs in eval mode without a tape, in chunks.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "data/images/shapes.h"
#include "nn/vision/vision_transformer.h"

namespace attn::experiments {

struct ShapesVitSettings {
  nn::VisionTransformerOptions model;
  data::ShapesDataset::Config data;
  int64_t steps = 1500, batch = 64, warmup = 100;
  double lr = 2e-3;
  uint64_t seed = 1;  // weights from seed, training images from seed + 1
};

struct ShapesVitRun {
  std::shared_ptr<nn::VisionTransformer> model;
  std::vector<double> losses;  // training loss of every step
  double seconds = 0;          // wall time of the training loop
};

// Trains with train::fit: Adam, linear warm-up then cosine decay, fresh images every step.
ShapesVitRun train_shapes_vit(const ShapesVitSettings& s);

struct ShapesScore {
  double accuracy = 0;
  std::vector<double> per_class;     // accuracy on the images of each class
  std::vector<int64_t> predictions;  // the predicted class of every image, in order
};
ShapesScore score_shapes(nn::VisionTransformer& model, const data::ImageBatch& set);

// The set with every image's patches (and its clean picture's) shuffled by its own random
// permutation.
data::ImageBatch shuffle_each(const data::ImageBatch& set, int64_t patch_size, Generator& gen);

// Runs the set through the model (eval, no tape, chunks of `chunk` images) and calls
// visit(first_image, weights) with each chunk's attention weights, one (b,H,1+N,1+N) per layer.
void visit_attention(nn::VisionTransformer& model,
                     const data::ImageBatch& set,
                     const std::function<void(int64_t, const std::vector<Tensor>&)>& visit,
                     int64_t chunk = 250);

}  // namespace attn::experiments
