// anagrams [002 §39.5.1]: without positions, self-attention cannot tell a sentence from any
// reordering of its words — the multiset of output rows is the same. With positions it can.
//
//   attnlab run anagrams
//   attnlab run anagrams --seed 3 --d_model 32
//
// Three sentences over {the, cat, sat, on, mat}: the original, subject and object swapped, and
// gibberish. Each goes through the same embedding and one untrained head (d_model 16 -> d_k 8).
// We compare the sorted output rows of each pair: identical without positions (the document
// prints True, True), different once sinusoidal (nn/positional/sinusoidal.h) or learned
// (nn/positional/learned.h) positions are added to the embeddings before the projections.
// We also check the stronger statement of Exercise 39.1: the output of the permuted input is
// the permuted output (equivariance), row by row.
//
// 001 (positional encoding) and 003 (transformer architecture) call self-attention
// "permutation-invariant". Both properties are measured on the same head, for P the word
// permutation taking s1 to s2 and to s3:
//   invariance    Attention(PX) = Attention(X)       error max_i |out(PX)[i] - out(X)[i]|
//   equivariance  Attention(PX) = P Attention(X)     error max_i |out(PX)[i] - out(X)[P(i)]|
// Only the second holds: row i of the output belongs to token i, and moving the token moves its
// row. (A pooled summary of the rows — a mean, a [CLS] read-out — is invariant.)
#include "experiments/kit/kit.h"
#include "nn/positional/learned.h"
#include "nn/positional/sinusoidal.h"

namespace attn::experiments {

namespace {

using Sentence = std::vector<std::string>;
const std::vector<std::string> kVocab{"the", "cat", "sat", "on", "mat"};
const Sentence kS1{"the", "cat", "sat", "on", "the", "mat"};  // the original
const Sentence kS2{"the", "mat", "sat", "on", "the", "cat"};  // subject <-> object
const Sentence kS3{"mat", "the", "on", "sat", "cat", "the"};  // gibberish

enum class Positions { kNone, kSinusoidal, kLearned };
const char* name_of(Positions p) {
  return p == Positions::kNone ? "none" : p == Positions::kSinusoidal ? "sinusoidal" : "learned";
}

// One embedding, one head, optional positions: all drawn once from the seed.
struct Model {
  nn::Embedding emb;
  nn::Linear wq, wk, wv;
  nn::LearnedPositionalEmbedding learned;
  int64_t d_k;
  Model(int64_t d_model, int64_t d_k_, Generator& gen)
      : emb(static_cast<int64_t>(kVocab.size()), d_model, gen),
        wq(d_model, d_k_, false, gen),
        wk(d_model, d_k_, false, gen),
        wv(d_model, d_k_, false, gen),
        learned(16, d_model, gen),
        d_k(d_k_) {}

  Tensor attend(const Sentence& words, Positions pos) const {
    NoGrad off;
    const int64_t t = static_cast<int64_t>(words.size());
    Tensor ids({1, t});
    for (int64_t i = 0; i < t; ++i)
      ids[i] =
          static_cast<real>(std::find(kVocab.begin(), kVocab.end(), words[i]) - kVocab.begin());
    Var x = emb.forward(ids);  // (1,T,d_model)
    if (pos == Positions::kSinusoidal)
      x = add(x, Var::constant(nn::sinusoidal_table(t, x.size(-1))));
    else if (pos == Positions::kLearned)
      x = learned.forward(x);
    auto head = [&](const nn::Linear& w) { return reshape(w.forward(x), {1, 1, t, d_k}); };
    return nn::scaled_dot_product_attention(head(wq), head(wk), head(wv))
        .out.value()
        .reshape({t, d_k});
  }
};

// Rows sorted lexicographically: the multiset of rows in a canonical order.
Tensor sorted_rows(const Tensor& m) {
  const int64_t t = m.size(0), c = m.size(1);
  std::vector<int64_t> order(t);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return std::lexicographical_compare(m.data() + a * c, m.data() + (a + 1) * c, m.data() + b * c,
                                        m.data() + (b + 1) * c);
  });
  Tensor out({t, c});
  for (int64_t r = 0; r < t; ++r)
    std::copy(m.data() + order[r] * c, m.data() + (order[r] + 1) * c, out.data() + r * c);
  return out;
}

// perm[i] = the position in `a` of the word at position i of `b` (repeated words in order).
std::vector<int64_t> word_permutation(const Sentence& a, const Sentence& b) {
  std::vector<bool> used(a.size(), false);
  std::vector<int64_t> perm;
  for (const auto& w : b)
    for (size_t j = 0; j < a.size(); ++j)
      if (!used[j] && a[j] == w) {
        used[j] = true;
        perm.push_back(static_cast<int64_t>(j));
        break;
      }
  return perm;
}

// max over rows i of |out_b[i] - out_a[perm[i]]|: 0 (up to rounding) means equivariance.
double equivariance_error(const Tensor& out_a,
                          const Tensor& out_b,
                          const std::vector<int64_t>& perm) {
  const int64_t c = out_a.size(1);
  double m = 0;
  for (size_t i = 0; i < perm.size(); ++i)
    for (int64_t j = 0; j < c; ++j)
      m = std::max(m, static_cast<double>(std::fabs(out_b[i * c + j] - out_a[perm[i] * c + j])));
  return m;
}

// 001's and 003's word "permutation-invariant" against both properties, without positions.
void invariant_or_equivariant(const Model& model, double atol, RunContext& ctx) {
  const Tensor o1 = model.attend(kS1, Positions::kNone);
  double invariance = 0, equivariance = 0;
  for (const Sentence* s : {&kS2, &kS3}) {
    const Tensor o = model.attend(*s, Positions::kNone);
    invariance = std::max(invariance, max_abs_diff(o1, o));  // row i against row i
    equivariance = std::max(equivariance, equivariance_error(o1, o, word_permutation(kS1, *s)));
  }
  ctx.result("invariance_error_none", invariance);
  ctx.result("equivariance_error_none_s2_s3", equivariance);
  const std::string word = invariance <= atol     ? "invariant"
                           : equivariance <= atol ? "equivariant"
                                                  : "neither";
  const std::string why = fmt::format(
      "the equivariance error max |out(PX) - P out(X)| is {}, the invariance error "
      "max |out(PX) - out(X)| is {} (tolerance {})",
      sig(equivariance, 2), sig(invariance, 2), atol);
  Table t("No positions: which property holds? (P = the word permutation s1 -> s2 and s1 -> s3)",
          {"property", "equation", "max |diff|", "holds (atol)"});
  t.add_row(
      {"invariance", "out(PX) = out(X)", sig(invariance, 2), kit::yes_no(invariance <= atol)});
  t.add_row({"equivariance", "out(PX) = P out(X)", sig(equivariance, 2),
             kit::yes_no(equivariance <= atol)});
  ctx.section("Invariant or equivariant?");
  ctx.table(t);
  for (const char* where : {"001 positional encoding", "003 transformer architecture"}) {
    DocumentComparison cmp(fmt::format("{} vs ours", where));
    cmp.add("no positions: max |out(PX) - out(X)|, zero if permutation-invariant", 0, invariance,
            atol, why);
    cmp.add_exact("no positions: under a permutation of its input, self-attention is", "invariant",
                  word, why);
    ctx.compare(cmp);
  }
}

void run(const Config& cfg, RunContext& ctx) {
  Generator gen(ctx.seed());
  const Model model(cfg.get_int("d_model"), cfg.get_int("d_k"), gen);
  const double atol = cfg.get_real("atol");
  DocumentComparison cmp("002 §39.5.1 vs ours");
  Table summary("Is the multiset of output rows identical? (allclose after sorting rows)",
                {"positions", "s1 vs s2", "s1 vs s3", "max |diff| s1/s2", "max |diff| s1/s3",
                 "equivariance error s1->s2"});
  for (Positions p : {Positions::kNone, Positions::kSinusoidal, Positions::kLearned}) {
    const Tensor o1 = model.attend(kS1, p), o2 = model.attend(kS2, p), o3 = model.attend(kS3, p);
    const double d12 = max_abs_diff(sorted_rows(o1), sorted_rows(o2));
    const double d13 = max_abs_diff(sorted_rows(o1), sorted_rows(o3));
    const bool same12 = d12 <= atol, same13 = d13 <= atol;
    const double eq = equivariance_error(o1, o2, word_permutation(kS1, kS2));
    summary.add_row({name_of(p), same12 ? "True" : "False", same13 ? "True" : "False", sig(d12, 2),
                     sig(d13, 2), sig(eq, 2)});
    const std::string key = name_of(p);
    ctx.result("s1_vs_s2_" + key, same12);
    ctx.result("s1_vs_s3_" + key, same13);
    ctx.result("max_diff_s1_s2_" + key, d12);
    ctx.result("max_diff_s1_s3_" + key, d13);
    ctx.result("equivariance_error_" + key, eq);
    if (p == Positions::kNone) {
      ctx.section("Without positions");
      Table first("First output row of each sentence", {"sentence", "word at 0", "row 0"});
      const std::vector<std::pair<const Sentence*, const Tensor*>> all{
          {&kS1, &o1}, {&kS2, &o2}, {&kS3, &o3}};
      for (size_t i = 0; i < all.size(); ++i)
        first.add_row({fmt::format("s{}: {}", i + 1, fmt::join(*all[i].first, " ")),
                       (*all[i].first)[0], format_numbers(row_values(*all[i].second, 0), 3)});
      ctx.table(first);
      cmp.add_exact("no positions: s1 vs s2", "True", same12 ? "True" : "False");
      cmp.add_exact("no positions: s1 vs s3", "True", same13 ? "True" : "False");
      const double d_row0 = kit::max_abs_diff(row_values(o1, 0), row_values(o2, 0));
      cmp.add_exact("no positions: row 0 of s1 == row 0 of s2 ('the' at 0 in both)", "True",
                    d_row0 <= atol ? "True" : "False");
    } else {
      const std::string why =
          "adding p_i makes equal tokens at different positions differ (§39.5.1)";
      cmp.add_exact(key + " positions: s1 vs s2", "False", same12 ? "True" : "False", why);
      cmp.add_exact(key + " positions: s1 vs s3", "False", same13 ? "True" : "False", why);
    }
  }
  ctx.section("All three, with and without positions");
  ctx.table(summary);
  ctx.note(fmt::format(
      "allclose uses atol = {}. Without positions the three anagrams give the same set of rows in "
      "a different order: attention sees a bag of tokens. Equivariance holds row by row: the "
      "output for the reordered sentence is the reordered output (error at float rounding). "
      "With sinusoidal or learned positions added before the projections, the rows differ by "
      "orders of magnitude more than the tolerance. (The document's 'False with positions' is "
      "the claim of its text; its code only runs the no-position case.)",
      atol));
  ctx.compare(cmp);
  invariant_or_equivariant(model, atol, ctx);
}

}  // namespace

Experiment anagrams() {
  Experiment e;
  e.name = "anagrams";
  e.source = "002 §39.5.1";
  e.purpose = "Without positions attention cannot tell anagrams apart; with positions it can";
  e.config.add_int("d_k", 8, "query/key/value width", {.min = 1})
      .add_real("atol", 1e-5, "tolerance of the allclose comparison", {.min = 0});
  add_model_fields(e.config, {.d_model = 16});
  add_seed_field(e.config, 7, "random seed (the document seeds PyTorch with 7)");
  e.reference = true;  // its point is the computation: the elementary ops on the tape
  e.run = run;
  return e;
}

}  // namespace attn::experiments
