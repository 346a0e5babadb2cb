#include "experiments/report/compare.h"

#include <algorithm>
#include <cmath>

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
  c.ok = c.max_diff <= tolerance;  // false for NaN
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
  c.ok = document == ours;
  c.max_diff = c.ok ? 0 : 1;
  c.reason = reason;
  entries_.push_back(std::move(c));
  return entries_.back();
}

int DocumentComparison::num_differ() const {
  return static_cast<int>(
      std::count_if(entries_.begin(), entries_.end(), [](const auto& c) { return !c.ok; }));
}

Table DocumentComparison::table() const {
  Table t(title_, {"", "document", "ours", "max|diff|", "tolerance", "status", "reason"});
  for (const auto& c : entries_) {
    const bool exact = c.document.empty();
    t.add_row({c.name, c.document_text, c.ours_text, exact ? "" : sig(c.max_diff, 2),
               exact ? "exact" : sig(c.tolerance, 2), c.ok ? "ok" : "DIFFERS",
               c.ok ? "" : c.reason});
    if (!c.ok) t.flag_last_row();
  }
  return t;
}

nlohmann::ordered_json DocumentComparison::to_json() const {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& c : entries_) {
    nlohmann::ordered_json j{
        {"name", c.name}, {"status", c.ok ? "ok" : "DIFFERS"}, {"reason", c.reason}};
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
    }
    rows.push_back(std::move(j));
  }
  return {{"title", title_}, {"entries", rows}, {"differ", num_differ()}};
}

}  // namespace attn::experiments
