// attention-rank part 2 (attention_rank.h): the singular spectra of a trained character LM's
// attention matrices, layer by layer, over seeds, beside the same model untrained.
//
// Each layer's matrices are read on --heldout_windows held-out windows of --block_len
// characters (every head of every window is one (T,T) matrix, causal: lower triangular). Per
// matrix: the share of the energy (sum s_i^2) in the top --top_k singular values; per layer:
// the mean over windows and heads; per claim: the mean over seeds, with the seeds' spread as
// the noise. A causal matrix has a positive diagonal, so it always has full numerical rank T:
// "low rank" can only mean that few directions hold most of the energy.
#include "data/corpus.h"
#include "experiments/efficient/attention_rank.h"
#include "experiments/kit/kit.h"
#include "experiments/kit/language_model_steps.h"
#include "experiments/kit/spread.h"
#include "nn/transformer/decoder_only.h"

namespace attn::experiments::rank {

namespace {

constexpr int64_t kSentences = 2000;  // ~80k characters of the built-in toy grammar

struct ModelSpectra {
  std::vector<double> top_energy;               // per layer, mean over windows and heads
  std::vector<std::vector<double>> cumulative;  // per layer: energy in the top i+1, i < T
  double heldout_nll = 0;                       // nats per character
};

nn::DecoderOnlyOptions model_options(const Config& cfg, int64_t vocab) {
  const auto m = read_model(cfg);
  nn::DecoderOnlyOptions o;
  o.vocab_size = vocab;
  o.max_len = cfg.get_int("block_len");
  o.d_model = m.d_model;
  o.nhead = m.nhead;
  o.num_layers = m.num_layers;
  o.dim_feedforward = m.dim_ff;
  return o;
}

// One forward over the held-out windows (eval mode, no gradient): the NLL and every layer's
// attention spectra.
ModelSpectra spectra_of(nn::DecoderOnlyTransformer& model, const data::Batch& held, int64_t k) {
  NoGrad off;
  model.eval();
  kit::NextTokenNll nll;
  nll.add(model.forward(held.tgt_in).value(), held.tgt_out, data::kIgnoreIndex);
  ModelSpectra out;
  out.heldout_nll = nll.mean();
  for (const auto& layer : *model.layers) {
    const Tensor& w = layer->self_attn->last_weights();  // (B,H,T,T)
    const int64_t t = w.size(-1), matrices = w.numel() / (t * t);
    std::vector<double> cumulative(static_cast<size_t>(t), 0.0);
    double top = 0;
    for (int64_t m = 0; m < matrices; ++m) {
      Tensor a({t, t});
      std::copy(w.data() + m * t * t, w.data() + (m + 1) * t * t, a.data());
      const std::vector<double> s = singular_values(a);
      top += top_energy(s, k) / static_cast<double>(matrices);
      for (int64_t i = 0; i < t; ++i)
        cumulative[static_cast<size_t>(i)] += top_energy(s, i + 1) / static_cast<double>(matrices);
    }
    out.top_energy.push_back(top);
    out.cumulative.push_back(std::move(cumulative));
  }
  model.train();
  return out;
}

ModelSpectra train_one(const Config& cfg,
                       RunContext& ctx,
                       const data::CharCorpus& corpus,
                       const data::Batch& held,
                       int64_t seed_index) {
  const uint64_t seed = ctx.seed() + 1000 * static_cast<uint64_t>(seed_index);
  Generator init(seed), data_gen(seed + 1);
  nn::DecoderOnlyTransformer model(model_options(cfg, corpus.tokenizer().vocab_size()), init);
  const data::LanguageModelTask task(corpus, cfg.get_int("block_len"), data::Split::kTrain);
  train::FitSettings s =
      kit::fit_settings(ctx, fmt::format("char LM seed {}", seed_index + 1), read_optimizer(cfg));
  s.optimizer.d_model = model_options(cfg, 1).d_model;  // for --schedule noam
  train::fit(model, s, [&](const train::BatchPart& part) {
    return kit::language_model_step(task, s.batch_size, data_gen, part,
                                    [&](const Tensor& ids) { return model.forward(ids); });
  });
  return spectra_of(model, held, cfg.get_int("top_k"));
}

// The cross-entropy of predicting each held-out character from the training split's character
// frequencies: what a model that learned nothing about context reaches.
double unigram_nll(const data::CharCorpus& corpus) {
  std::vector<double> counts(static_cast<size_t>(corpus.tokenizer().vocab_size()), 1.0);  // +1
  for (int64_t id : corpus.train_ids()) counts[static_cast<size_t>(id)] += 1;
  double total = 0, nll = 0;
  for (double c : counts) total += c;
  for (int64_t id : corpus.val_ids()) nll -= std::log(counts[static_cast<size_t>(id)] / total);
  return nll / static_cast<double>(corpus.val_ids().size());
}

void spectra_figure(const std::vector<ModelSpectra>& trained,
                    const ModelSpectra& untrained,
                    int64_t k,
                    RunContext& ctx) {
  LinePlot p = kit::line_plot("Attention energy in the top i singular values (T x T, causal)",
                              "i (singular values kept)", "share of sum s^2", kit::Axes::kLogX);
  for (size_t l = 0; l < untrained.cumulative.size(); ++l) {
    std::vector<double> mean(untrained.cumulative[l].size(), 0.0), x;
    for (const ModelSpectra& m : trained)
      for (size_t i = 0; i < mean.size(); ++i)
        mean[i] += m.cumulative[l][i] / static_cast<double>(trained.size());
    for (size_t i = 0; i < mean.size(); ++i) x.push_back(static_cast<double>(i + 1));
    p.series.push_back({fmt::format("layer {} trained", l + 1), x, mean, "", false, false});
    p.series.push_back(
        {fmt::format("layer {} untrained", l + 1), x, untrained.cumulative[l], "", true, false});
  }
  p.refs = {{RefLine::kVertical, static_cast<double>(k), fmt::format("top_k = {}", k)}};
  ctx.figure("layer_spectra", line_plot_svg(p),
             "Cumulative singular-value energy per layer (mean over held-out windows, heads and "
             "seeds); dashed: the same model untrained");
}

}  // namespace

void trained_layers_part(const Config& cfg, RunContext& ctx, DocumentComparison& cmp) {
  const int64_t k = cfg.get_int("top_k"), seeds = cfg.get_int("seeds");
  const int64_t block = cfg.get_int("block_len");
  ctx.section(
      fmt::format("Part 2: spectra of a trained character LM's attention, {} seeds", seeds));
  const data::CharCorpus corpus(data::toy_grammar_text(kSentences, 7));
  const data::LanguageModelTask val(corpus, block, data::Split::kValidation);
  std::vector<data::Example> windows = val.all_windows();
  windows.resize(std::min(windows.size(), static_cast<size_t>(cfg.get_int("heldout_windows"))));
  const data::Batch held = data::collate_language_model(windows);

  Generator untrained_init(ctx.seed());
  nn::DecoderOnlyTransformer fresh(model_options(cfg, corpus.tokenizer().vocab_size()),
                                   untrained_init);
  const ModelSpectra untrained = spectra_of(fresh, held, k);
  // The seeds' models are independent (each its own generators), so they train side by side.
  const std::vector<ModelSpectra> trained = kit::side_by_side(
      static_cast<size_t>(seeds),
      [&](size_t s) { return train_one(cfg, ctx, corpus, held, static_cast<int64_t>(s)); });

  const double baseline = unigram_nll(corpus);
  const kit::Spread nll = kit::spread_of(kit::column(trained, &ModelSpectra::heldout_nll));
  const size_t layers = untrained.top_energy.size();
  // The tolerance of a mean over seeds: three standard errors, 3 sd / sqrt(seeds).
  const double se_factor = 3 / std::sqrt(static_cast<double>(seeds));
  Table t(fmt::format("Share of attention energy in the top {} of {} singular values", k, block),
          {"layer", "untrained", "trained (mean ± sd over seeds)", "change from the layer below"});
  std::vector<kit::Spread> per_layer;
  for (size_t l = 0; l < layers; ++l) {
    std::vector<double> e, delta;
    for (const ModelSpectra& m : trained) {
      e.push_back(m.top_energy[l]);
      if (l > 0) delta.push_back(m.top_energy[l] - m.top_energy[l - 1]);
    }
    per_layer.push_back(kit::spread_of(e));
    const kit::Spread d = l > 0 ? kit::spread_of(delta) : kit::Spread{};
    t.add_row({std::to_string(l + 1), fixed(untrained.top_energy[l]),
               fmt::format("{} ± {}", fixed(per_layer[l].mean), fixed(per_layer[l].sd)),
               l > 0 ? fmt::format("{:+.3f} ± {:.3f}", d.mean, d.sd) : "-"});
    ctx.result(fmt::format("top_energy_layer{}", l + 1), e);
    ctx.result(fmt::format("top_energy_untrained_layer{}", l + 1), untrained.top_energy[l]);

    const std::string half_row =
        fmt::format("layer {}: the top {} of {} singular values hold most (> 1/2) of the energy",
                    l + 1, k, block);
    const double margin = per_layer[l].mean - 0.5, tol = se_factor * per_layer[l].sd;
    cmp.add_exact(half_row, "yes", kit::yes_no(margin > 0),
                  "the trained matrices spread their energy over more directions")
        .not_judged_if(std::abs(margin) <= tol, "within three standard errors of 1/2 over seeds")
        .not_judged_if(seeds < 3, "fewer than 3 seeds: no spread")
        .not_judged_if(nll.mean >= baseline,
                       "the LM predicts no better than character frequencies");
    if (l == 0) continue;
    cmp.add_exact(fmt::format("layer {} more concentrated than layer {} (top-{} energy higher)",
                              l + 1, l, k),
                  "yes", kit::yes_no(d.mean > 0), "this layer's energy is less concentrated")
        .not_judged_if(std::abs(d.mean) <= se_factor * d.sd,
                       "the change is within three standard errors over seeds")
        .not_judged_if(seeds < 3, "fewer than 3 seeds: no spread")
        .not_judged_if(nll.mean >= baseline,
                       "the LM predicts no better than character frequencies");
  }
  ctx.table(t);
  kit::record(ctx, {{"heldout_nll", kit::column(trained, &ModelSpectra::heldout_nll)},
                    {"unigram_nll", baseline}});
  ctx.note(fmt::format(
      "Held-out next-character loss {:.3f} ± {:.3f} nats (character frequencies alone: {:.3f}). "
      "The untrained model (weights N(0, 0.02)) attends almost uniformly over the prefix; that "
      "matrix is itself concentrated in few directions, so compare each trained layer with it.",
      nll.mean, nll.sd, baseline));
  spectra_figure(trained, untrained, k, ctx);
}

}  // namespace attn::experiments::rank
