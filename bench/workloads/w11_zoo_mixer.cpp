// W11: one training step of attention-zoo's titans-mac model, at the experiment's defaults: the
// MixerModel body (d_model 32, 2 heads, 2 layers, feed-forward 2 d_model, sinusoidal positions,
// read-out at the last position) with the zoo registry's titans-mac mixer (segments of 8, 2
// persistent tokens, a linear memory written by a gradient step after each segment), batch 32,
// Adam at the constant rate 3e-3, on the experiment's two tasks:
//   recall    6 key-value pairs, T = 14, vocabulary 43 (and as many classes), 3000 steps there;
//   majority  the long-range task, T = 64, vocabulary 15, 2 classes, 300 steps there.
// Why this mixer: in a profile of `attnlab run attention-zoo --quick --threads 1` per variant,
// titans-mac has the zoo's most expensive training step and spends ~9% of its time in
// broadcasting kernels (a (1) gate times a (B,d,d) memory, parameters copied per batch row,
// l2-normalisation by (B,n,1) norms), against 1-4% for most other variants (docs/performance.md).
// The model comes from the zoo's own registry row and zoo_body, as attention-zoo builds it, so the
// bench times the experiment's code; bench/torch_reference.py writes the same layer in torch ops.
// Each case's name carries the model's parameter count, so a twin of another size does not pair.
#include <fmt/format.h>

#include <memory>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "bench/workloads/workloads.h"
#include "data/batch.h"
#include "data/tasks/long_range.h"
#include "data/tasks/recall.h"
#include "experiments/common/zoo_variants.h"
#include "nn/attention/titans_memory.h"
#include "train/optim/adam.h"

namespace attn::bench {

namespace {

constexpr int64_t kBatch = 32, kDim = 32, kHeads = 2, kLayers = 2;
// The zoo's titans-mac row uses these (titans_model checks it): the FLOP count and the PyTorch
// twin need them.
constexpr int64_t kSegment = 8, kPersistent = 2;

const nn::MixerRow& titans_row() {
  static const std::vector<nn::MixerRow> rows = experiments::zoo_recurrent_variants();
  for (const nn::MixerRow& r : rows)
    if (r.name == "titans-mac") return r;
  throw Error("bench W11: attention-zoo has no titans-mac variant");
}

std::unique_ptr<nn::MixerModel> titans_model(const data::Task& task, Generator& gen) {
  const int64_t t = task.max_src_len();
  const nn::MixerShape shape{.d_model = kDim, .nhead = kHeads, .max_len = t, .layers = kLayers};
  const experiments::ZooBody body = experiments::zoo_body("titans-mac");
  const nn::MixerRow& row = titans_row();
  return std::make_unique<nn::MixerModel>(
      nn::MixerModelOptions{.vocab = task.tokenizer().vocab_size(),
                            .max_len = t,
                            .d_model = kDim,
                            .layers = kLayers,
                            .classes = task.num_classes(),
                            .ff_mult = body.ff_mult,
                            .positions = body.positions},
      [&](int64_t layer, Generator& g) {
        nn::Mixer m = row.make(shape, layer, g);
        const auto* mac = dynamic_cast<const nn::TitansMemoryAttention*>(m.module.get());
        if (mac == nullptr || mac->options().segment != kSegment ||
            mac->options().persistent != kPersistent || mac->options().memory_depth != 1)
          throw Error(fmt::format(
              "bench W11: attention-zoo's titans-mac is no longer a linear memory with segments "
              "of {} and {} persistent tokens: update W11 and its PyTorch twin",
              kSegment, kPersistent));
        return m;
      },
      gen);
}

// Forward GEMM FLOPs (same formula as torch_reference.titans_flops). Per layer and segment of n
// rows: the memory read (W_q, then Q M), q/k/v projections of the P + 2n context rows, scores
// and weighted sum of n queries over P + 2n keys, the output projection, and, after every
// segment but the last, the write (W_k, W_v, K M, K^T R). Then the feed-forward and the head.
double titans_flops(int64_t t, int64_t classes) {
  const double b = kBatch, d = kDim;
  double f = 0;
  for (int64_t first = 0; first < t; first += kSegment) {
    const double n = static_cast<double>(std::min(kSegment, t - first));
    const double ctx = static_cast<double>(kPersistent) + 2 * n;
    f += 2 * b * n * d * d * 2 + 2 * b * ctx * d * d * 3 + 2 * 2 * b * n * ctx * d +
         2 * b * n * d * d;
    if (first + kSegment < t) f += 2 * b * n * d * d * 4;
  }
  f *= kLayers;
  f += kLayers * 2 * b * static_cast<double>(t) * d * (2 * d) * 2;
  return f + 2 * b * d * static_cast<double>(classes);
}

struct TitansState {
  explicit TitansState(std::shared_ptr<const data::Task> task_in) : task(std::move(task_in)) {
    Generator data_gen(17);
    const data::Batch batch = data::sample_classification(*task, kBatch, data_gen, false);
    ids = batch.src;
    labels = batch.labels;
  }
  std::shared_ptr<const data::Task> task;
  Generator gen{0};
  std::unique_ptr<nn::MixerModel> model = titans_model(*task, gen);
  train::Adam opt{model->parameters(), {.lr = 3e-3}};
  Tensor ids, labels;
};

BenchCase titans_case(const std::string& label, std::shared_ptr<const data::Task> task) {
  Generator count_gen(0);
  const int64_t params = titans_model(*task, count_gen)->num_parameters();
  const int64_t t = task->max_src_len();
  auto s = std::make_shared<std::unique_ptr<TitansState>>();
  BenchCase c;
  c.workload = "W11";
  c.name = fmt::format("titans-mac {} step T={} p={}", label, t, params);
  c.flops = 3 * titans_flops(t, task->num_classes());
  c.tokens = static_cast<double>(kBatch * t);
  c.setup = [s, task] { *s = std::make_unique<TitansState>(task); };
  c.step = [s] {
    TitansState& st = **s;
    st.opt.zero_grad();
    cross_entropy(st.model->forward(st.ids), st.labels).backward();
    st.opt.step();
  };
  c.teardown = [s] { s->reset(); };
  return c;
}

}  // namespace

std::vector<BenchCase> w11_cases() {
  return {titans_case("recall",
                      std::make_shared<data::RecallTask>(data::RecallTask::Config{.num_pairs = 6})),
          titans_case("majority", std::make_shared<data::LongRangeTask>(data::LongRangeTask::Config{
                                      .mode = data::LongRangeMode::kMajority, .seq_len = 64}))};
}

}  // namespace attn::bench
