// Table: a titled grid of text cells, printed to the terminal and rendered into report.html.
//
//   attn::experiments::Table t("Attention matrix A", {"query", "the", "cat"});
//   t.add_row({"the", "0.401", "0.198"});
//   t.print();                  // aligned columns with a rule under the header
//   t.html();                   // <table>...</table>
//
//   // A matrix with row and column labels, numbers to `precision` decimals:
//   Table m = Table::matrix("A", a, {"q0", "q1"}, {"k0", "k1"}, 3);
#pragma once

#include <string>
#include <vector>

#include "autograd/tensor.h"

namespace attn::experiments {

class Table {
 public:
  Table(std::string title, std::vector<std::string> header);

  // A (R,C) tensor (or a rank-1 tensor as one row) as a table. Empty label lists mean 0, 1, ...
  static Table matrix(const std::string& title,
                      const Tensor& values,
                      std::vector<std::string> row_labels = {},
                      std::vector<std::string> col_labels = {},
                      int precision = 3);

  void add_row(std::vector<std::string> cells);
  // Marks a row as flagged (printed with a marker, highlighted in HTML).
  void flag_last_row() { flagged_.back() = true; }

  const std::string& title() const { return title_; }
  const std::vector<std::string>& header() const { return header_; }
  const std::vector<std::vector<std::string>>& rows() const { return rows_; }

  // Aligned text: numbers right-aligned, text left-aligned.
  std::string text() const;
  void print() const;
  std::string html() const;

 private:
  std::string title_;
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<bool> flagged_;
};

// "0.401" — fixed decimals; "-0.000" is printed as "0.000".
std::string fixed(double v, int precision = 3);
// Shortest readable form for tables: 3 significant digits, scientific outside [1e-3, 1e6).
std::string sig(double v, int digits = 3);
// Scientific notation with `decimals` digits after the point: sci(0.000123) = "1.23e-04".
std::string sci(double v, int decimals = 2);
// Width in terminal columns (and SVG characters): UTF-8 code points, not bytes ('␣' is one).
size_t display_width(const std::string& s);
// Escapes &, <, >, " for HTML and SVG text.
std::string xml_escape(const std::string& s);

}  // namespace attn::experiments
