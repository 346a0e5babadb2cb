// The document beside ours: every number a document prints, next to what we computed, and
// whether this run can judge it.
//
//   attn::experiments::DocumentComparison cmp;
//   cmp.add("A[0,:]", {0.401, 0.198, 0.401}, {a[0], a[1], a[2]}, 5e-4);      // ok / DIFFERS
//   cmp.add("prose softmax row 0", {0.39, 0.22, 0.39}, ours_row0, 5e-3,
//           "the prose disagrees with the document's own printed output");
//   cmp.add_exact("s1 vs s2 identical", "True", ours ? "True" : "False");
//   cmp.add_exact("the model learns reversal", "yes", yes(exact >= 0.9))
//       .needs_training(token_accuracy, chance);   // "not judged" when the model never trained
//   cmp.add("largest distance", 31, max_distance, 0).exact_quantity();   // an integer count
//   ctx.compare(cmp);   // prints the table, adds it to results.json and report.html
//
// Every row has an outcome and a status:
//   outcome  ok when max |document - ours| <= tolerance (numbers) or the texts are equal (exact
//            entries), else DIFFERS (shown with the difference and, when known, the reason);
//   status   the outcome when this run can judge the row, else `not judged` with the reason:
//            "--quick run" (RunContext marks every row of a --quick run), "model did not train
//            (final accuracy 0.158 < 0.412)" (needs_training), "too few samples (n=12 < 30)"
//            (needs_samples), or any reason given to not_judged_if. A run never says `ok` about
//            a claim it cannot judge; num_differ() counts only judged DIFFERS.
// "Ours" must come from the run. A numeric row whose ours equals the document's number bit for
// bit is recorded as such in results.json, and the registry test (tests/cli/
// experiments_registry.sh, in scripts/test) fails on it unless the row says ours is an exact
// quantity (a count, an integer, a length: exact_quantity()), where equality is expected.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/report/table.h"

namespace attn::experiments {

enum class ClaimStatus { kOk, kDiffers, kNotJudged };
// "ok", "DIFFERS", "not judged": the words the table, results.json and the tests use.
const char* status_name(ClaimStatus s);

struct Comparison {
  std::string name;
  std::vector<double> document, ours;  // numeric entries (empty for exact ones)
  std::string document_text, ours_text;
  double tolerance = 0;
  double max_diff = 0;            // max |document - ours|; 0 or 1 for exact entries
  bool agrees = true;             // the outcome: within tolerance / the texts equal, judged or not
  std::string reason;             // why it differs, when known
  std::string not_judged_reason;  // why this run cannot judge the row; empty: judged
  bool exact = false;  // ours is an exact quantity, so ours == document bit for bit is expected

  ClaimStatus outcome() const { return agrees ? ClaimStatus::kOk : ClaimStatus::kDiffers; }
  ClaimStatus status() const { return judged() ? outcome() : ClaimStatus::kNotJudged; }
  bool judged() const { return not_judged_reason.empty(); }
  // Every ours value equals its document value bit for bit (numeric rows only).
  bool ours_is_document() const;

  // Not judged when `condition` holds, because of `why` (reasons accumulate, "; "-separated).
  Comparison& not_judged_if(bool condition, const std::string& why);
  // Not judged unless the model trained: "model did not train (final <metric> 0.158 < 0.412)"
  // when reached < needed. `needed` is what a model that learned nothing scores (chance, the
  // best constant guess, a bigram baseline), plus its noise where that matters.
  Comparison& needs_training(double reached, double needed, const std::string& metric = "accuracy");
  // Not judged with fewer than `needed` samples: "too few samples (n=12 < 30)".
  Comparison& needs_samples(int64_t n, int64_t needed);
  // Ours is an exact quantity (a count, an integer, a shape): equal to the document bit for bit
  // is the expected result, not a copied constant.
  Comparison& exact_quantity();
};

class DocumentComparison {
 public:
  explicit DocumentComparison(std::string title = "Document vs ours");

  // Numbers printed to `precision` decimals (the document's own precision is a good choice).
  Comparison& add(const std::string& name,
                  double document,
                  double ours,
                  double tolerance,
                  const std::string& reason = "",
                  int precision = 3);
  Comparison& add(const std::string& name,
                  const std::vector<double>& document,
                  const std::vector<double>& ours,
                  double tolerance,
                  const std::string& reason = "",
                  int precision = 3);
  // One entry per row of a matrix: "<name>[r,:]" compares document[r] with row r of ours (R,C).
  void add_rows(const std::string& name,
                const std::vector<std::vector<double>>& document,
                const Tensor& ours,
                double tolerance,
                const std::string& reason = "",
                int precision = 3);
  // Words or booleans that must match exactly.
  Comparison& add_exact(const std::string& name,
                        const std::string& document,
                        const std::string& ours,
                        const std::string& reason = "");
  // Every row not judged, `why` first (RunContext::compare does this for a --quick run).
  void not_judged(const std::string& why);

  const std::string& title() const { return title_; }
  const std::vector<Comparison>& entries() const { return entries_; }
  int num_differ() const;      // judged rows that DIFFER
  int num_not_judged() const;  // rows this run cannot judge

  // name | document | ours | max|diff| | tolerance | status | reason; DIFFERS rows are flagged.
  Table table() const;
  nlohmann::ordered_json to_json() const;

 private:
  std::string title_;
  std::vector<Comparison> entries_;
};

// "[0.401 0.198 0.401]" (or "0.401" for one value).
std::string format_numbers(const std::vector<double>& xs, int precision);
// "3 of 5 entries agree, 1 DIFFERS, 1 not judged": the summary line of a table or a run.
std::string agreement_summary(int entries, int differ, int not_judged);

}  // namespace attn::experiments
