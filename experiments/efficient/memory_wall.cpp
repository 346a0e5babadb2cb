// memory-wall [002 §39.3.2, 000 §V]: the T x T attention matrix, counted and measured.
//
//   attnlab run memory-wall
//   attnlab run memory-wall --measure_lengths 1024,2048,4096,8192,16384 --max_naive_mib 4096
//
// Part 1 recomputes the document's table: storing one T x T matrix per head and layer for the
// backward pass costs bytes * B * h * L * T^2. Part 2 measures, on this machine, the peak extra
// memory of one attention forward+backward (1 head, d = 64): naive attention (scores, softmax
// and their gradients are T x T tensors) against blockwise attention (attn::blockwise_attention,
// an online softmax over tiles that never holds the T x T matrix). Naive grows like T^2,
// blockwise like T.
#include "experiments/common/attention_steps.h"
#include "experiments/common/peak_memory.h"
#include "experiments/kit/kit.h"

namespace attn::experiments {

namespace {

// 002 §39.3.2's printed table (B = 1, h = 16, L = 32, fp16), one decimal.
const std::vector<int64_t> kDocT{512, 2048, 8192, 32768, 131072};
const std::vector<double> kDocPerMatrixMiB{0.5, 8.0, 128.0, 2048.0, 32768.0};
const std::vector<double> kDocTotalGiB{0.2, 4.0, 64.0, 1024.0, 16384.0};

constexpr double kMiB = 1024.0 * 1024.0, kGiB = kMiB * 1024.0;
constexpr double kBoltzmann = 1.380649e-23;  // J/K

void counted_part(const Config& cfg, RunContext& ctx) {
  const double bytes = cfg.get_real("bytes_per_element");
  const int64_t b = cfg.get_int("batch_size"), h = cfg.get_int("nhead"),
                l = cfg.get_int("num_layers");
  ctx.section("Part 1: the document's table, computed");
  Table t(fmt::format("Attention matrices kept for backward: {} bytes x B={} x h={} x L={} x T^2",
                      bytes, b, h, l),
          {"T", "one matrix (MiB)", "one layer, all heads (MiB)", "whole model (GiB)",
           "> 80 GiB (A100)?"});
  std::vector<double> per_matrix, per_layer, total;
  for (int64_t T : cfg.get_ints("lengths")) {
    const double t2 = static_cast<double>(T) * static_cast<double>(T);
    per_matrix.push_back(bytes * t2 / kMiB);
    per_layer.push_back(bytes * b * h * t2 / kMiB);
    total.push_back(bytes * b * h * l * t2 / kGiB);
    t.add_row({std::to_string(T), fixed(per_matrix.back(), 1), fixed(per_layer.back(), 1),
               fixed(total.back(), 2), total.back() > 80 ? "yes" : "no"});
  }
  ctx.table(t);
  ctx.result("lengths", cfg.get_ints("lengths"));
  ctx.result("one_matrix_mib", per_matrix);
  ctx.result("one_layer_mib", per_layer);
  ctx.result("total_gib", total);
  ctx.note(
      "The document labels its middle column 'per-layer attn matrix', but its formula 2 T^2 "
      "counts one matrix: one head of one example. A layer with 16 heads holds 16 of them (our "
      "third column). Its totals are right.");

  DocumentComparison cmp("002 §39.3.2 and 000 §V vs ours");
  if (cfg.get_ints("lengths") == kDocT) {
    cmp.add("one matrix (MiB)", kDocPerMatrixMiB, per_matrix, 0.05 + 1e-9, "", 1)
        .exact_quantity();  // bytes counted, powers of two
    cmp.add("total (GiB)", kDocTotalGiB, total, 0.05 + 1e-9,
            "the document rounds 0.25 to 0.2 (one decimal, round-half-even)", 2);
    cmp.add_exact("T = 32768 exceeds an A100's 80 GiB", "yes", total[3] > 80 ? "yes" : "no");
    cmp.add_exact("T = 131072 needs terabytes", "yes", total[4] >= 1024 ? "yes" : "no");
  }
  // 001: "a million-element matrix" at 1,000 tokens, read off a real forward's weights (its
  // 100,000-token one would take 40 GB: not built, so not a row).
  {
    Generator gen(ctx.seed());
    NoGrad off;
    const Var x = Var::constant(Tensor::randn({1, 1000, 64}, gen));
    const auto built = static_cast<double>(attention_steps(x, x, x, 0.125).weights.numel());
    ctx.result("entries_built_t1000", built);
    cmp.add("001: entries of one attention matrix at 1,000 tokens (a million)", 1e6, built, 0, "",
            0)
        .exact_quantity();
  }
  // 000 §V.1: the number of entries of one attention matrix.
  cmp.add("entries at N = 512", 262144, 512.0 * 512.0, 0, "", 0).exact_quantity();
  cmp.add("entries at N = 2048", 4194304, 2048.0 * 2048.0, 0, "", 0).exact_quantity();
  // 000 §V.3: Landauer's bound, k_B T ln 2 per erased bit, for N^2 attention weights at 300 K.
  const double n2 = 2048.0 * 2048.0, per_bit = kBoltzmann * 300 * std::log(2.0);
  const double joules = n2 * per_bit;
  ctx.result("landauer_joules_n2048_1bit", joules);
  ctx.result("landauer_joules_n2048_32bit", 32 * joules);
  cmp.add("Landauer bound at N = 2048, log10(J)", -18, std::log10(joules), 0.5,
          fmt::format("N^2 k_B T ln2 = {:.3g} bits x {:.3g} J = {:.2g} J (or {:.2g} J for 32-bit "
                      "weights); the document's '10^18' (its exponent's sign lost in the text) is "
                      "off by about 4 orders either way",
                      n2, per_bit, joules, 32 * joules),
          2);
  ctx.compare(cmp);
}

// One forward + backward of attention over (1, T, d) inputs; returns the output for checking.
Tensor attention_pass(bool blockwise, int64_t t, int64_t d, int64_t block, Generator& gen) {
  Var q = Var::parameter(Tensor::randn({1, t, d}, gen));
  Var k = Var::parameter(Tensor::randn({1, t, d}, gen));
  Var v = Var::parameter(Tensor::randn({1, t, d}, gen));
  const double scale = 1 / std::sqrt(static_cast<double>(d));
  Var y = blockwise ? blockwise_attention(q, k, v, false, block, static_cast<real>(scale))
                    : attention_steps(q, k, v, scale).out;
  Tensor out = y.value();
  sum(y).backward();
  return out;
}

// Per measured length T: peak tensor MiB, peak process MiB and seconds, [0] naive, [1] blockwise
// (NaN where naive was skipped).
struct Measured {
  std::vector<double> ts, mib[2], rss[2], secs[2];
};

Measured measured_part(const Config& cfg, RunContext& ctx) {
  ctx.section("Part 2: measured on this machine (1 head, forward + backward)");
  PeakMemory probe;
  const int64_t d = cfg.get_int("d"), block = cfg.get_int("block");
  const double limit = static_cast<double>(cfg.get_int("max_naive_mib"));
  Generator gen(ctx.seed());
  {  // correctness first: both compute the same attention
    Generator g1(ctx.seed()), g2(ctx.seed());
    const double diff = max_abs_diff(attention_pass(false, 256, d, block, g1),
                                     attention_pass(true, 256, d, block, g2));
    ctx.note(fmt::format("At T = 256 blockwise and naive outputs differ by at most {:.2g}.", diff));
    ctx.result("naive_vs_blockwise_max_diff_T256", diff);
  }
  Table t("Peak extra memory of one forward + backward: tensors (exact) and process (OS)",
          {"T", "naive tensors (MiB)", "blockwise tensors (MiB)", "ratio", "naive process (MiB)",
           "blockwise process (MiB)", "T^2 x 4 B (MiB)", "naive (s)", "blockwise (s)"});
  Measured m;
  auto &ts = m.ts, *mib = m.mib, *rss = m.rss, *secs = m.secs;
  for (int64_t T : cfg.get_ints("measure_lengths")) {
    const double t2 = static_cast<double>(T) * static_cast<double>(T);
    const double naive_estimate = 6.0 * 4.0 * t2 / kMiB;  // six T x T tensors at the peak
    ts.push_back(static_cast<double>(T));
    for (int which = 0; which < 2; ++which) {
      if (which == 0 && naive_estimate > limit) {
        for (std::vector<double>* skipped : {&mib[0], &rss[0], &secs[0]}) skipped->push_back(NAN);
        continue;
      }
      PeakUse use;
      secs[which].push_back(seconds_of(
          [&] { use = probe.measure([&] { attention_pass(which == 1, T, d, block, gen); }); }));
      mib[which].push_back(static_cast<double>(use.tensor_bytes) / kMiB);
      rss[which].push_back(use.resident_bytes < 0 ? NAN
                                                  : static_cast<double>(use.resident_bytes) / kMiB);
    }
    auto cell = [](double v, int p) { return std::isnan(v) ? std::string("-") : fixed(v, p); };
    t.add_row({std::to_string(T), cell(mib[0].back(), 1), cell(mib[1].back(), 2),
               std::isnan(mib[0].back()) ? "-" : fixed(mib[0].back() / mib[1].back(), 0) + "x",
               cell(rss[0].back(), 1), cell(rss[1].back(), 1), fixed(4.0 * t2 / kMiB, 1),
               cell(secs[0].back(), 3), cell(secs[1].back(), 3)});
  }
  ctx.table(t);
  ctx.note(fmt::format(
      "'-': naive skipped above an estimated {} MiB (--max_naive_mib). Tensor memory includes "
      "the inputs q, k, v, the output and all gradients (7 T x d floats). Process memory also "
      "counts per-thread scratch and allocator slack, and is missing where /proc/self/clear_refs "
      "cannot be written.",
      cfg.get_int("max_naive_mib")));
  ctx.result("measure_lengths", cfg.get_ints("measure_lengths"));
  ctx.result("naive_tensor_peak_mib", mib[0]);
  ctx.result("blockwise_tensor_peak_mib", mib[1]);
  ctx.result("naive_process_peak_mib", rss[0]);
  ctx.result("blockwise_process_peak_mib", rss[1]);
  ctx.result("naive_seconds", secs[0]);
  ctx.result("blockwise_seconds", secs[1]);
  return m;
}

// How the tensor memory grows with T, and its figure beside one T x T matrix.
void growth_part(const Measured& m, int64_t d, RunContext& ctx) {
  const std::vector<double>& ts = m.ts;
  // Growth exponents between the two largest lengths where each ran: ~2 naive, ~1 blockwise.
  auto slope = [&](const std::vector<double>& ys) {
    std::vector<size_t> ok;
    for (size_t i = 0; i < ys.size(); ++i)
      if (std::isfinite(ys[i]) && ys[i] > 0) ok.push_back(i);
    if (ok.size() < 2) return static_cast<double>(NAN);
    const size_t a = ok[ok.size() - 2], b = ok.back();
    return std::log(ys[b] / ys[a]) / std::log(ts[b] / ts[a]);
  };
  const double sn = slope(m.mib[0]), sb = slope(m.mib[1]);
  ctx.result("naive_growth_exponent", sn);
  ctx.result("blockwise_growth_exponent", sb);
  // 002 §39.3.2 and 001 on FlashAttention: blocks with an online softmax never hold the T x T
  // matrix, so memory grows like T instead of T^2. The two orders are exponents 1 and 2; the
  // tolerance is a quarter of that gap (the O(T d) inputs and gradients bend the naive curve's
  // exponent below 2 at short lengths).
  DocumentComparison cmp("002 §39.3.2 and 001 (FlashAttention) vs the measured peaks");
  cmp.add("naive attention's memory grows like T^2 (exponent)", 2, sn, 0.25,
          "between the two largest lengths measured", 2)
      .not_judged_if(std::isnan(sn), "fewer than two lengths measured");
  cmp.add("blockwise attention's memory grows like T (exponent)", 1, sb, 0.25,
          "between the two largest lengths measured", 2)
      .not_judged_if(std::isnan(sb), "fewer than two lengths measured");
  ctx.compare(cmp);
  ctx.note(fmt::format(
      "Tensor memory grows between the two largest lengths like T^{:.2f} (naive) and T^{:.2f} "
      "(blockwise).",
      sn, sb));

  LinePlot p = kit::line_plot(
      "Peak tensor memory of attention forward + backward (d = " + std::to_string(d) + ")",
      "sequence length T", "MiB", kit::Axes::kLogLog);
  p.series = {{"naive attention", ts, m.mib[0]}, {"blockwise attention", ts, m.mib[1]}};
  std::vector<double> ref;
  for (double T : ts) ref.push_back(4.0 * T * T / kMiB);
  p.series.push_back({"one T x T float matrix", ts, ref, "#9ca3af", true, false});
  ctx.figure("peak_memory", line_plot_svg(p), "Naive grows like T^2, blockwise like T");
}

// The eight GPT-3 models of Brown et al. 2020, "Language Models are Few-Shot Learners",
// Table 2.1 ("Sizes, architectures, and learning hyper-parameters of the models we trained"):
// name, parameters, layers, model width, heads.
struct PublishedSize {
  const char* name;
  const char* params;
  int64_t layers, d_model, heads;
};
const std::vector<PublishedSize> kGpt3Sizes{
    {"Small", "125M", 12, 768, 12},  {"Medium", "350M", 24, 1024, 16},
    {"Large", "760M", 24, 1536, 16}, {"XL", "1.3B", 24, 2048, 24},
    {"2.7B", "2.7B", 32, 2560, 32},  {"6.7B", "6.7B", 32, 4096, 32},
    {"13B", "13B", 40, 5140, 40},    {"175B", "175B", 96, 12288, 96}};

// 002 §39.3.2 calls h heads x L layers (16 x 32) a "GPT-3 small-ish" profile. The distance to a
// published size is taken on a log scale, sqrt(ln(L/L')^2 + ln(h/h')^2), so that twice as many
// layers counts as much as twice as many heads; ties name every nearest size.
void gpt3_profile_part(const Config& cfg, RunContext& ctx) {
  const int64_t h = cfg.get_int("nhead"), l = cfg.get_int("num_layers");
  Table t(fmt::format("GPT-3's published sizes (Brown et al. 2020, Table 2.1) against h = {}, "
                      "L = {}",
                      h, l),
          {"model", "parameters", "layers", "d_model", "heads", "log distance"});
  std::vector<double> distance;
  for (const PublishedSize& m : kGpt3Sizes) {
    const double dl = std::log(static_cast<double>(l) / static_cast<double>(m.layers));
    const double dh = std::log(static_cast<double>(h) / static_cast<double>(m.heads));
    distance.push_back(std::sqrt(dl * dl + dh * dh));
    t.add_row({m.name, m.params, std::to_string(m.layers), std::to_string(m.d_model),
               std::to_string(m.heads), fixed(distance.back(), 3)});
  }
  const double nearest = *std::min_element(distance.begin(), distance.end());
  std::vector<std::string> closest;
  for (size_t i = 0; i < distance.size(); ++i)
    if (distance[i] <= nearest + 1e-12) closest.push_back(kGpt3Sizes[i].name);
  const std::string ours = fmt::format("{}", fmt::join(closest, " / "));
  ctx.section("The document's profile against GPT-3's published sizes");
  ctx.table(t);
  ctx.result("gpt3_closest_to_profile", ours);
  ctx.result("gpt3_log_distance_to_small", distance[0]);
  DocumentComparison cmp("002 §39.3.2 vs ours: the model profile");
  cmp.add_exact(fmt::format("closest published GPT-3 size to {} heads x {} layers", h, l), "Small",
                ours,
                fmt::format("GPT-3 Small has {} layers and {} heads (log distance {:.2f}); the "
                            "nearest published size is at {:.2f}",
                            kGpt3Sizes[0].layers, kGpt3Sizes[0].heads, distance[0], nearest));
  ctx.compare(cmp);
}

void run(const Config& cfg, RunContext& ctx) {
  counted_part(cfg, ctx);
  gpt3_profile_part(cfg, ctx);
  if (cfg.get_bool("measure")) growth_part(measured_part(cfg, ctx), cfg.get_int("d"), ctx);
}

}  // namespace

Experiment memory_wall() {
  Experiment e;
  e.name = "memory-wall";
  e.source = "002 §39.3.2";
  e.purpose = "The O(T^2) attention memory: the document's table, then naive vs blockwise measured";
  e.nondeterministic = {
      "fits growth exponents to measured times; the blockwise kernel's peak holds one scratch "
      "block per thread",
      {"growth_exponent", "^blockwise_tensor_peak_mib$"}};
  // B, h and L of the table: the shared names (train/options/groups.h).
  add_model_fields(e.config, {.nhead = 16, .num_layers = 32});
  add_optimizer_fields(e.config, {.batch_size = 1});
  e.config.add_real("bytes_per_element", 2, "bytes per stored weight (2 = fp16)", {.min = 0})
      .add_ints("lengths", {512, 2048, 8192, 32768, 131072}, "T values of the table", {.min = 1})
      .add_bool("measure", true, "also measure naive vs blockwise on this machine")
      .add_ints("measure_lengths", {512, 1024, 2048, 4096, 8192}, "T values to measure",
                {.min = 16})
      .add_int("d", 64, "head dimension for the measurement", {.min = 1})
      .add_int("block", 64, "tile size of blockwise attention", {.min = 1})
      .add_int("max_naive_mib", 2048, "skip naive runs whose T x T tensors would exceed this",
               {.min = 1});
  e.quick = {{"measure_lengths", "256,512,1024"}};
  e.run = run;
  return e;
}

}  // namespace attn::experiments
