#include "experiments/report/compare.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "autograd/error.h"

namespace attn::experiments {

std::string format_numbers(const std::vector<double>& xs, int precision) {
  if (xs.size() == 1) return fixed(xs[0], precision);
  std::string s = "[";
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i) s += ' ';
    s += fixed(xs[i], precision);
  }
  return s + "]";
}

const char* status_name(ClaimStatus s) {
  static const char* const names[] = {"ok", "DIFFERS", "not judged"};  // in ClaimStatus order
  return names[static_cast<int>(s)];
}

std::string agreement_summary(int entries, int differ, int not_judged) {
  const int agree = entries - differ - not_judged;
  std::string s = fmt::format("{} of {} entries agree", agree, entries);
  if (differ) s += fmt::format(", {} DIFFER{}", differ, differ == 1 ? "S" : "");
  if (not_judged) s += fmt::format(", {} not judged", not_judged);
  return s;
}

bool Comparison::ours_is_document() const {
  if (document.empty() || document.size() != ours.size()) return false;
  // Bit for bit, so that 0.0 and -0.0 or two NaNs are told apart exactly as stored.
  return std::memcmp(document.data(), ours.data(), document.size() * sizeof(double)) == 0;
}

Comparison& Comparison::not_judged_if(bool condition, const std::string& why) {
  if (!condition) return *this;
  if (why.empty()) throw Error("Comparison '" + name + "': not_judged_if needs a reason");
  not_judged_reason += (not_judged_reason.empty() ? "" : "; ") + why;
  return *this;
}

Comparison& Comparison::needs_training(double reached, double needed, const std::string& metric) {
  const bool trained = reached >= needed;  // false for a NaN
  return not_judged_if(!trained, fmt::format("model did not train (final {} {:.3f} < {:.3f})",
                                             metric, reached, needed));
}

Comparison& Comparison::needs_samples(int64_t n, int64_t needed) {
  return not_judged_if(n < needed, fmt::format("too few samples (n={} < {})", n, needed));
}

Comparison& Comparison::exact_quantity() {
  if (document.empty())
    throw Error("Comparison '" + name + "': exact_quantity is for numeric rows (add)");
  exact = true;
  return *this;
}

DocumentComparison::DocumentComparison(std::string title) : title_(std::move(title)) {}

Comparison& DocumentComparison::add(const std::string& name,
                                    double document,
                                    double ours,
                                    double tolerance,
                                    const std::string& reason,
                                    int precision) {
  return add(name, std::vector<double>{document}, std::vector<double>{ours}, tolerance, reason,
             precision);
}

Comparison& DocumentComparison::add(const std::string& name,
                                    const std::vector<double>& document,
                                    const std::vector<double>& ours,
                                    double tolerance,
                                    const std::string& reason,
                                    int precision) {
  if (document.size() != ours.size() || document.empty())
    throw Error(fmt::format("DocumentComparison '{}': the document has {} values, ours {}", name,
                            document.size(), ours.size()));
  Comparison c;
  c.name = name;
  c.document = document;
  c.ours = ours;
  c.document_text = format_numbers(document, precision);
  c.ours_text = format_numbers(ours, precision);
  c.tolerance = tolerance;
  for (size_t i = 0; i < document.size(); ++i) {
    const double d = std::fabs(document[i] - ours[i]);
    if (std::isnan(d)) {  // std::max would silently drop a NaN
      c.max_diff = NAN;
      break;
    }
    c.max_diff = std::max(c.max_diff, d);
  }
  c.agrees = c.max_diff <= tolerance;  // false for NaN
  c.reason = reason;
  entries_.push_back(std::move(c));
  return entries_.back();
}

void DocumentComparison::add_rows(const std::string& name,
                                  const std::vector<std::vector<double>>& document,
                                  const Tensor& ours,
                                  double tolerance,
                                  const std::string& reason,
                                  int precision) {
  const int64_t rows = ours.rank() == 2 ? ours.size(0) : 0;
  if (rows != static_cast<int64_t>(document.size()))
    throw Error(fmt::format("DocumentComparison '{}': the document has {} rows, ours is {}", name,
                            document.size(), shape_str(ours.shape())));
  const int64_t cols = ours.size(1);
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> row(ours.data() + r * cols, ours.data() + (r + 1) * cols);
    add(fmt::format("{}[{},:]", name, r), document[r], row, tolerance, reason, precision);
  }
}

Comparison& DocumentComparison::add_exact(const std::string& name,
                                          const std::string& document,
                                          const std::string& ours,
                                          const std::string& reason) {
  Comparison c;
  c.name = name;
  c.document_text = document;
  c.ours_text = ours;
  c.agrees = document == ours;
  c.max_diff = c.agrees ? 0 : 1;
  c.reason = reason;
  entries_.push_back(std::move(c));
  return entries_.back();
}

void DocumentComparison::not_judged(const std::string& why) {
  for (auto& c : entries_)
    c.not_judged_reason = why + (c.not_judged_reason.empty() ? "" : "; " + c.not_judged_reason);
}

int DocumentComparison::num_differ() const {
  return static_cast<int>(std::count_if(entries_.begin(), entries_.end(), [](const auto& c) {
    return c.status() == ClaimStatus::kDiffers;
  }));
}

int DocumentComparison::num_not_judged() const {
  return static_cast<int>(
      std::count_if(entries_.begin(), entries_.end(), [](const auto& c) { return !c.judged(); }));
}

Table DocumentComparison::table() const {
  Table t(title_, {"", "document", "ours", "max|diff|", "tolerance", "status", "reason"});
  for (const auto& c : entries_) {
    const bool exact = c.document.empty();
    // A row not judged still shows how it came out, so a reader sees what the run measured.
    std::string why = c.agrees ? "" : c.reason;
    if (!c.judged())
      why = c.not_judged_reason + (c.agrees ? ""
                                            : " (outside the tolerance" +
                                                  (c.reason.empty() ? "" : ": " + c.reason) + ")");
    t.add_row({c.name, c.document_text, c.ours_text, exact ? "" : sig(c.max_diff, 2),
               exact ? "exact" : sig(c.tolerance, 2), status_name(c.status()), why});
    if (c.status() == ClaimStatus::kDiffers) t.flag_last_row();
  }
  return t;
}

nlohmann::ordered_json DocumentComparison::to_json() const {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& c : entries_) {
    nlohmann::ordered_json j{{"name", c.name},
                             {"status", status_name(c.status())},
                             {"outcome", status_name(c.outcome())},
                             {"reason", c.reason}};
    if (!c.judged()) j["not_judged"] = c.not_judged_reason;
    if (c.document.empty()) {
      j["document"] = c.document_text;
      j["ours"] = c.ours_text;
    } else {
      j["document"] = c.document.size() == 1 ? nlohmann::ordered_json(c.document[0])
                                             : nlohmann::ordered_json(c.document);
      j["ours"] =
          c.ours.size() == 1 ? nlohmann::ordered_json(c.ours[0]) : nlohmann::ordered_json(c.ours);
      j["max_diff"] = c.max_diff;
      j["tolerance"] = c.tolerance;
      j["exact_quantity"] = c.exact;
      j["ours_is_document"] = c.ours_is_document();
    }
    rows.push_back(std::move(j));
  }
  return {{"title", title_},
          {"entries", rows},
          {"differ", num_differ()},
          {"not_judged", num_not_judged()}};
}

}  // namespace attn::experiments
