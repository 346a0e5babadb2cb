// The document beside ours: every number a document prints, next to what we computed.
//
//   attn::experiments::DocumentComparison cmp;
//   cmp.add("A[0,:]", {0.401, 0.198, 0.401}, {a[0], a[1], a[2]}, 5e-4);      // ok / DIFFERS
//   cmp.add("prose softmax row 0", {0.39, 0.22, 0.39}, ours_row0, 5e-3,
//           "the prose disagrees with the document's own printed output");
//   cmp.add_exact("s1 vs s2 identical", "True", ours ? "True" : "False");
//   ctx.compare(cmp);   // prints the table, adds it to results.json and report.html
//
// An entry is ok when max |document - ours| <= tolerance (numbers) or the texts are equal
// (exact entries). A DIFFERS line shows the difference and, when known, the reason.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/report/table.h"

namespace attn::experiments {

struct Comparison {
  std::string name;
  std::vector<double> document, ours;  // numeric entries (empty for exact ones)
  std::string document_text, ours_text;
  double tolerance = 0;
  double max_diff = 0;  // max |document - ours|; 0 or 1 for exact entries
  bool ok = true;
  std::string reason;  // why it differs, when known
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

  const std::string& title() const { return title_; }
  const std::vector<Comparison>& entries() const { return entries_; }
  int num_differ() const;

  // name | document | ours | max|diff| | tolerance | status | reason; DIFFERS rows are flagged.
  Table table() const;
  nlohmann::ordered_json to_json() const;

 private:
  std::string title_;
  std::vector<Comparison> entries_;
};

// "[0.401 0.198 0.401]" (or "0.401" for one value).
std::string format_numbers(const std::vector<double>& xs, int precision);

}  // namespace attn::experiments
