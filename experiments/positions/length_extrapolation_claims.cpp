#include "experiments/positions/length_extrapolation_claims.h"

#include "experiments/kit/kit.h"

namespace attn::experiments::extrapolation {

namespace {

// Five standard errors of an accuracy p measured over n characters.
double five_se(double p, int64_t n) {
  return 5 * std::sqrt(p * (1 - p) / static_cast<double>(std::max<int64_t>(n, 1)));
}

// Two standard errors of (drop of a) - (drop of b) at length index i: four accuracies, each a
// fraction of its own characters.
double drop_noise(const VariantRun& a, const VariantRun& b, size_t i) {
  double var = 0;
  for (const VariantRun* r : {&a, &b})
    for (size_t k : {size_t{0}, i})
      var += r->accuracy[k] * (1 - r->accuracy[k]) / static_cast<double>(r->scored[k]);
  return 2 * std::sqrt(var);
}

const VariantRun* find(const std::vector<VariantRun>& runs, const std::string& name) {
  for (const auto& r : runs)
    if (r.name == name) return &r;
  return nullptr;
}

// The accuracy lost from the training length (the first evaluated length) to length index i.
double drop(const VariantRun& r, size_t i) {
  return r.accuracy.front() - r.accuracy[i];
}

// The claims' setting: which lengths were evaluated, the training length, what "holds" means.
struct Claims {
  std::vector<int64_t> lengths;
  int64_t train_len;
  double hold, bigram;
  DocumentComparison& cmp;

  // A claim row can judge only variants that trained, and only a length past training.
  void judge(Comparison& c, const std::vector<const VariantRun*>& used, size_t i) const {
    c.not_judged_if(lengths[i] <= train_len,
                    fmt::format("no evaluation length past --train_len {}", train_len));
    for (const VariantRun* r : used)
      c.needs_training(r->accuracy.front(), bigram + five_se(bigram, r->scored.front()),
                       r->name + " accuracy");
  }
  // "v holds": its accuracy at length index i drops by at most `hold`.
  void holds(const std::string& claim,
             const VariantRun* r,
             size_t i,
             const std::string& why_not) const {
    if (!r) return;
    const bool ok = drop(*r, i) <= hold;
    judge(cmp.add_exact(claim, "yes", kit::yes_no(ok),
                        fmt::format("{:.3f} at {} vs {:.3f} at {}; far mass {:.3f}{}",
                                    r->accuracy[i], lengths[i], r->accuracy.front(),
                                    lengths.front(), r->far_mass[i], ok ? "" : why_not)),
          {r}, i);
  }
  // "Worse" = a larger drop at the longest length than each of `others`, by more than two
  // standard errors.
  void drops_more(const std::string& claim,
                  const VariantRun& worse,
                  std::initializer_list<const VariantRun*> others) const {
    const size_t last = lengths.size() - 1;
    bool more = true;
    std::string text = fmt::format("{} {:.3f} -> {:.3f} (drop {:.3f})", worse.name,
                                   worse.accuracy.front(), worse.accuracy[last], drop(worse, last));
    for (const VariantRun* o : others) {
      more = more && drop(worse, last) > drop(*o, last) + drop_noise(worse, *o, last);
      text += fmt::format(", {} {:.3f} -> {:.3f} (drop {:.3f})", o->name, o->accuracy.front(),
                          o->accuracy[last], drop(*o, last));
    }
    text += fmt::format(" from {} to {}", lengths.front(), lengths.back());
    std::vector<const VariantRun*> used{&worse};
    used.insert(used.end(), others.begin(), others.end());
    judge(cmp.add_exact(claim, "yes", kit::yes_no(more), text), used, last);
  }
};

}  // namespace

void compare_with_documents(const Config& cfg,
                            RunContext& ctx,
                            const std::vector<VariantRun>& runs,
                            double bigram) {
  const std::vector<int64_t> lengths = cfg.get_ints("eval_lengths");
  const int64_t train_len = cfg.get_int("train_len");
  for (const auto& r : runs) {
    double worst = 0;
    for (size_t i = 0; i < lengths.size(); ++i) worst = std::max(worst, drop(r, i));
    ctx.result("in_distribution_" + r.name, r.accuracy.front());
    ctx.result("worst_drop_" + r.name, worst);
  }
  ctx.result("bigram_accuracy", bigram);
  // The first evaluated length at least 4 x train_len (or the longest).
  const size_t last = lengths.size() - 1;
  size_t at = last;
  for (size_t i = 0; i < lengths.size() && at == last; ++i)
    if (lengths[i] >= 4 * train_len) at = i;
  DocumentComparison cmp(fmt::format(
      "000 §VIII, 001, 004 §4.1 vs ours (trained on {}; 'holds' = accuracy drops by at most "
      "{:.2f} from length {})",
      train_len, cfg.get_real("hold"), lengths.front()));
  const Claims claims{lengths, train_len, cfg.get_real("hold"), bigram, cmp};
  const std::string at_text = fmt::format("{} ({}x)", lengths[at], lengths[at] / train_len);
  claims.holds(fmt::format("000 §VIII, 001: ALiBi extrapolates (train short, test {})", at_text),
               find(runs, "alibi"), at, "");
  claims.holds(fmt::format("000 §VIII, 001: RoPE extrapolates (test {})", at_text),
               find(runs, "rope"), at,
               ": the rotation is relative, but the scores at distances never trained were "
               "never shaped by the loss, and the far keys draw attention from the near ones");
  claims.holds(fmt::format("004 §4.1: window truncation is a good extrapolation baseline (test {})",
                           lengths.back()),
               find(runs, "window"), last, "");
  const VariantRun *sin = find(runs, "sinusoidal"), *alibi = find(runs, "alibi"),
                   *rope = find(runs, "rope"), *learned = find(runs, "learned");
  if (sin && alibi && rope)
    claims.drops_more(fmt::format("000 §VIII: added sinusoids extrapolate worse than RoPE and "
                                  "ALiBi (a larger drop at {})",
                                  lengths.back()),
                      *sin, {rope, alibi});
  if (learned && rope)
    claims.drops_more(
        fmt::format("001: RoPE generalises to longer inputs better than learned positions "
                    "(a vector per position, none past {}: the last one repeated)",
                    train_len),
        *learned, {rope});
  ctx.compare(cmp);
}

}  // namespace attn::experiments::extrapolation
