#include "experiments/report/table.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "autograd/error.h"

namespace attn::experiments {

namespace {

bool looks_numeric(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+' ||
          c == 'e' || c == 'x' || c == '%' || c == ' '))
      return false;
  return std::isdigit(static_cast<unsigned char>(s.back())) || s.back() == '%' || s.back() == 'x';
}

std::string pad(const std::string& s, size_t width, bool right) {
  const size_t w = display_width(s);
  const std::string fill(width > w ? width - w : 0, ' ');
  return right ? fill + s : s + fill;
}

}  // namespace

size_t display_width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

std::string fixed(double v, int precision) {
  std::string s = fmt::format("{:.{}f}", v, precision);
  if (s.find_first_not_of("-0.") == std::string::npos && s[0] == '-') s.erase(0, 1);
  return s;
}

std::string sig(double v, int digits) {
  if (v == 0) return "0";
  if (!std::isfinite(v)) return fmt::format("{}", v);
  const double a = std::fabs(v);
  if (a < 1e-3 || a >= 1e6) return fmt::format("{:.{}e}", v, digits - 1);
  return fmt::format("{:.{}g}", v, std::max(digits, static_cast<int>(std::log10(a)) + 1));
}

std::string sci(double v, int decimals) {
  return fmt::format("{:.{}e}", v, decimals);
}

std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

Table::Table(std::string title, std::vector<std::string> header)
    : title_(std::move(title)), header_(std::move(header)) {}

Table Table::matrix(const std::string& title,
                    const Tensor& values,
                    std::vector<std::string> row_labels,
                    std::vector<std::string> col_labels,
                    int precision) {
  if (values.rank() > 2)
    throw Error(fmt::format("Table::matrix '{}': needs rank 1 or 2, got {}", title,
                            shape_str(values.shape())));
  const int64_t rows = values.rank() == 2 ? values.size(0) : 1;
  const int64_t cols = values.rank() == 0 ? 1 : values.size(-1);
  if (row_labels.empty())
    for (int64_t r = 0; r < rows; ++r) row_labels.push_back(std::to_string(r));
  if (col_labels.empty())
    for (int64_t c = 0; c < cols; ++c) col_labels.push_back(std::to_string(c));
  if (static_cast<int64_t>(row_labels.size()) != rows ||
      static_cast<int64_t>(col_labels.size()) != cols)
    throw Error(fmt::format("Table::matrix '{}': {} row / {} column labels for a {} matrix", title,
                            row_labels.size(), col_labels.size(), shape_str(values.shape())));
  std::vector<std::string> header{""};
  header.insert(header.end(), col_labels.begin(), col_labels.end());
  Table t(title, header);
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<std::string> cells{row_labels[r]};
    for (int64_t c = 0; c < cols; ++c) cells.push_back(fixed(values[r * cols + c], precision));
    t.add_row(std::move(cells));
  }
  return t;
}

void Table::add_row(std::vector<std::string> cells) {
  if (cells.size() != header_.size())
    throw Error(fmt::format("Table '{}': a row has {} cells but the header has {}", title_,
                            cells.size(), header_.size()));
  rows_.push_back(std::move(cells));
  flagged_.push_back(false);
}

std::string Table::text() const {
  std::vector<size_t> width(header_.size(), 0);
  std::vector<bool> numeric(header_.size(), true);
  for (size_t c = 0; c < header_.size(); ++c) width[c] = display_width(header_[c]);
  for (const auto& row : rows_)
    for (size_t c = 0; c < row.size(); ++c) {
      width[c] = std::max(width[c], display_width(row[c]));
      if (!row[c].empty() && !looks_numeric(row[c])) numeric[c] = false;
    }
  auto line = [&](const std::vector<std::string>& cells, bool flag) {
    std::string s = flag ? "! " : "  ";
    for (size_t c = 0; c < cells.size(); ++c)
      s += (c ? "  " : "") + pad(cells[c], width[c], numeric[c] && c > 0);
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::string out = title_.empty() ? "" : title_ + "\n";
  out += line(header_, false);
  size_t total = 0;
  for (size_t w : width) total += w + 2;
  out += "  " + std::string(total > 2 ? total - 2 : 0, '-') + "\n";
  for (size_t r = 0; r < rows_.size(); ++r) out += line(rows_[r], flagged_[r]);
  return out;
}

void Table::print() const {
  fmt::print("\n{}", text());
}

std::string Table::html() const {
  std::string out = "<table>";
  if (!title_.empty()) out += "<caption>" + xml_escape(title_) + "</caption>";
  out += "<thead><tr>";
  for (const auto& h : header_) out += "<th>" + xml_escape(h) + "</th>";
  out += "</tr></thead><tbody>";
  for (size_t r = 0; r < rows_.size(); ++r) {
    out += flagged_[r] ? "<tr class=\"flag\">" : "<tr>";
    for (size_t c = 0; c < rows_[r].size(); ++c) {
      const bool num = c > 0 && looks_numeric(rows_[r][c]);
      out += (num ? "<td class=\"num\">" : "<td>") + xml_escape(rows_[r][c]) + "</td>";
    }
    out += "</tr>";
  }
  return out + "</tbody></table>";
}

}  // namespace attn::experiments
