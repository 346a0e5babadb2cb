// gpt-bert-encdec, part 4 (experiments/architectures/gpt_bert_encdec.cpp): the masks, read off
// the trained models. A weight is exactly 0 where the mask hides a key, so "allowed" = weight > 0
// (causal in GPT and the decoder, full in BERT and the cross attention).
#include "experiments/architectures/gpt_bert_masks.h"

#include "data/tokenizer.h"
#include "experiments/common/head_roles.h"
#include "experiments/kit/kit.h"
#include "nn/transformer/decoder_only.h"
#include "nn/transformer/encoder_only.h"
#include "nn/transformer/seq2seq.h"

namespace attn::experiments::gpt_bert {

namespace {

// 1 where the weight is above 0 (the key is visible), else 0.
Tensor allowed(const Tensor& map) {
  Tensor a = Tensor::zeros(map.shape());
  for (int64_t i = 0; i < map.numel(); ++i) a[i] = map[i] > 0 ? 1 : 0;
  return a;
}

// Attention mass on keys after the query (j > i), averaged over the rows, and the smallest weight,
// over (B,H,Tq,Tk) maps whose queries are the last Tq positions of the keys' sequence.
struct MaskStats {
  double future_mass = 0, min_weight = 1;
};
MaskStats mask_stats(const Tensor& weights) {  // (B,H,Tq,Tk)
  const int64_t tq = weights.size(2), tk = weights.size(3);
  MaskStats m;
  for (int64_t i = 0; i < weights.numel(); ++i) {
    const int64_t q = (i / tk) % tq, k = i % tk;
    if (k > q + tk - tq) m.future_mass += weights[i];
    m.min_weight = std::min(m.min_weight, static_cast<double>(weights[i]));
  }
  m.future_mass /= static_cast<double>(weights.numel() / tk);  // per row
  return m;
}

// One attention of one trained model: layer 1's weights on one input, with its labels.
struct Panel {
  std::string name, title;
  Tensor weights;  // (B,H,Tq,Tk)
  std::vector<std::string> q, k;
};

// Layer 1 of the three models: GPT and BERT on a prefix of the first held-out window (the same
// text), the encoder-decoder on its first held-out example (its decoder and cross-attention).
std::vector<Panel> layer_one_panels(const Config& cfg,
                                    TrainedRun& gpt,
                                    TrainedRun& bert,
                                    TrainedRun& rev) {
  const auto n = static_cast<size_t>(cfg.get_int("mask_length"));
  // A prefix of the first held-out window (the same text for GPT and BERT).
  data::Example text = gpt.setup.heldout_set.at(0);
  text.src.resize(std::min(n, text.src.size()));
  text.tgt.resize(text.src.size());
  const Tensor ids = data::collate_language_model({text}).tgt_in;  // (1,n)
  const auto text_labels = kit::token_labels(gpt.setup.heldout->tokenizer(), text.src);

  NoGrad off;
  auto& g = dynamic_cast<nn::DecoderOnlyTransformer&>(gpt.summary.model->module());
  g.eval();
  g.forward(ids);
  const Tensor gw = (*g.layers)[0].self_attn->last_weights();
  auto& b = dynamic_cast<nn::EncoderOnlyTransformer&>(bert.summary.model->module());
  b.eval();
  b.forward(ids);
  const Tensor bw = (*b.layers)[0].self_attn->last_weights();
  auto& s = dynamic_cast<nn::Seq2SeqTransformer&>(rev.summary.model->module());
  s.eval();
  const data::Example& ex = rev.setup.heldout_set.at(0);
  const data::Batch rb = data::collate_seq2seq({ex}, 0, cfg.get_bool("src_eos"));
  const Seq2SeqAttention ra = record_attention(s, rb.src, rb.tgt_in);
  const kit::Seq2SeqLabels rl =
      kit::seq2seq_labels(rev.setup.heldout->tokenizer(), ex, cfg.get_bool("src_eos"));

  return {{"gpt_self", "GPT: causal self-attention", gw, text_labels, text_labels},
          {"bert_self", "BERT: full self-attention", bw, text_labels, text_labels},
          {"decoder_self", "decoder: causal self-attention", ra.decoder_self[0], rl.decoder,
           rl.decoder},
          {"cross", "decoder: cross-attention to the source", ra.cross[0], rl.decoder, rl.src}};
}

// The documents' three masks against the weights' statistics.
void compare_masks(std::map<std::string, MaskStats>& stats, DocumentComparison& cmp) {
  cmp.add_exact("GPT attends only to earlier tokens (causal)", "yes",
                kit::yes_no(stats["gpt_self"].future_mass == 0),
                fmt::format("mass on later keys {:.3g}", stats["gpt_self"].future_mass));
  cmp.add_exact("BERT attends both ways (every weight > 0)", "yes",
                kit::yes_no(stats["bert_self"].min_weight > 0),
                fmt::format("smallest weight {:.3g}", stats["bert_self"].min_weight));
  cmp.add_exact(
      "the decoder's self-attention is causal, its cross-attention full", "yes",
      kit::yes_no(stats["decoder_self"].future_mass == 0 && stats["cross"].min_weight > 0),
      fmt::format("later-key mass {:.3g}, smallest cross weight {:.3g}",
                  stats["decoder_self"].future_mass, stats["cross"].min_weight));
}

}  // namespace

void masks(const Config& cfg,
           RunContext& ctx,
           TrainedRun& gpt,
           TrainedRun& bert,
           TrainedRun& rev,
           DocumentComparison& cmp) {
  ctx.section("4. The three attention masks, read off the trained models");
  NoGrad off;
  const std::vector<Panel> panels = layer_one_panels(cfg, gpt, bert, rev);
  std::vector<Heatmap> mask_maps, weight_maps;
  Table t("Layer 1, every head: what the weights show",
          {"attention", "mean mass on later keys", "smallest weight", "mask"});
  std::map<std::string, MaskStats> stats;
  for (const auto& p : panels) {
    const MaskStats m = mask_stats(p.weights);
    stats[p.name] = m;
    const Tensor head = head_map(p.weights, 0, 0);
    Heatmap mh = attention_heatmap(allowed(head), p.q, p.k, p.title);
    mh.vmin = 0, mh.vmax = 1;
    mh.colorbar_label = "visible (1) or hidden (0)";
    mask_maps.push_back(mh);
    weight_maps.push_back(attention_heatmap(head, p.q, p.k, p.title + ", head 1"));
    const bool cross = p.name == "cross";
    t.add_row({p.title, cross ? "-" : fmt::format("{:.3g}", m.future_mass),
               fmt::format("{:.3g}", m.min_weight),
               cross                ? "none (every source key)"
               : m.future_mass == 0 ? "causal"
                                    : (m.min_weight > 0 ? "full" : "other")});
    if (!cross) ctx.result(p.name + "_future_mass", m.future_mass);
    ctx.result(p.name + "_min_weight", m.min_weight);
  }
  ctx.table(t);
  ctx.note(
      "A hidden key gets weight exactly 0 (its score is set to the lowest float before the "
      "softmax), so the mask can be read off the weights: 1 = visible.");
  ctx.figure("masks", heatmap_grid_svg(mask_maps, 2, "Visible keys (1) in layer 1, head 1"),
             "The masks: causal for GPT and the decoder's self-attention, full for BERT and for "
             "the cross-attention (every output position may read every source position)");
  ctx.figure("mask_weights", heatmap_grid_svg(weight_maps, 2, "Layer 1, head 1 weights"),
             "The weights the masks shape, on the same inputs");
  compare_masks(stats, cmp);
}

}  // namespace attn::experiments::gpt_bert
