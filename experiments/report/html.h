// report.html: one self-contained page (inline CSS, inline SVG, no scripts, no network).
//
//   attn::experiments::HtmlReport page("worked-example", "002 §39.2.1 — a worked 3-token example");
//   page.paragraph("What this run shows ...");
//   page.table(t);                     // attn::experiments::Table
//   page.comparison(cmp);              // the document beside ours, DIFFERS rows highlighted
//   page.figure(svg_text, "Attention matrix");
//   std::string html = page.html();
#pragma once

#include <string>
#include <vector>

#include "experiments/report/compare.h"
#include "experiments/report/table.h"

namespace attn::experiments {

class HtmlReport {
 public:
  HtmlReport(std::string title, std::string subtitle);

  void heading(const std::string& text);
  void paragraph(const std::string& text);  // plain text; blank lines start new paragraphs
  void preformatted(const std::string& text);
  void table(const Table& t);
  void comparison(const DocumentComparison& c);
  void figure(const std::string& svg, const std::string& caption, const std::string& file = "");
  // A short status line shown right under the title (set when the run ends).
  void summary(const std::string& text, bool good) {
    summary_ = text;
    summary_good_ = good;
  }
  // Raw HTML (trusted: written by our code, never by user input).
  void raw(const std::string& html) { blocks_.push_back(html); }

  std::string html() const;

 private:
  std::string title_, subtitle_, summary_;
  bool summary_good_ = true;
  std::vector<std::string> blocks_;
};

}  // namespace attn::experiments
