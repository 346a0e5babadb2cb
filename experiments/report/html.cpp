#include "experiments/report/html.h"

#include <fmt/format.h>

namespace attn::experiments {

namespace {

constexpr const char* kStyle = R"(
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; max-width: 1180px;
       margin: 24px auto; padding: 0 16px; color: #1f2937; line-height: 1.45; }
h1 { font-size: 26px; margin-bottom: 2px; }
h2 { font-size: 19px; border-bottom: 1px solid #e5e7eb; padding-bottom: 3px; margin-top: 30px; }
.subtitle { color: #4b5563; margin-top: 0; }
table { border-collapse: collapse; margin: 10px 0 18px; font-size: 13px; }
caption { text-align: left; font-weight: bold; padding: 4px 0; }
th, td { border: 1px solid #d1d5db; padding: 3px 8px; vertical-align: top; white-space: nowrap; }
td:last-child { white-space: normal; }
th { background: #f3f4f6; }
td.num { text-align: right; font-family: "DejaVu Sans Mono", monospace; }
tr.flag td { background: #fef2f2; }
tr.flag td:nth-child(6) { color: #b91c1c; font-weight: bold; }
.status-ok { color: #047857; font-weight: bold; }
.status-differs { color: #b91c1c; font-weight: bold; }
.status-unjudged { color: #6b7280; font-weight: bold; }
figure { margin: 12px 0 24px; }
figure svg { max-width: 100%; height: auto; border: 1px solid #e5e7eb; }
figcaption { color: #4b5563; font-size: 13px; }
pre { background: #f9fafb; border: 1px solid #e5e7eb; padding: 8px; overflow-x: auto; font-size: 12px; }
)";

std::string paragraphs(const std::string& text) {
  std::string out, current;
  auto flush = [&] {
    if (!current.empty()) out += "<p>" + xml_escape(current) + "</p>";
    current.clear();
  };
  size_t start = 0;
  while (start <= text.size()) {
    const size_t nl = text.find('\n', start);
    const std::string line =
        text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    if (line.empty())
      flush();
    else
      current += (current.empty() ? "" : " ") + line;
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  flush();
  return out;
}

}  // namespace

HtmlReport::HtmlReport(std::string title, std::string subtitle)
    : title_(std::move(title)), subtitle_(std::move(subtitle)) {}

void HtmlReport::heading(const std::string& text) {
  blocks_.push_back("<h2>" + xml_escape(text) + "</h2>");
}

void HtmlReport::paragraph(const std::string& text) {
  blocks_.push_back(paragraphs(text));
}

void HtmlReport::preformatted(const std::string& text) {
  blocks_.push_back("<pre>" + xml_escape(text) + "</pre>");
}

void HtmlReport::table(const Table& t) {
  blocks_.push_back(t.html());
}

void HtmlReport::comparison(const DocumentComparison& c) {
  const int bad = c.num_differ(), unjudged = c.num_not_judged();
  const int total = static_cast<int>(c.entries().size());
  // Green only when every row was judged and agrees: a row not judged is no evidence.
  const char* style = bad > 0 ? "status-differs" : unjudged > 0 ? "status-unjudged" : "status-ok";
  std::string summary = agreement_summary(total, bad, unjudged);
  if (bad) summary += " (reasons in the table)";
  blocks_.push_back(fmt::format("<p class=\"{}\">{}.</p>", style, xml_escape(summary)) +
                    c.table().html());
}

void HtmlReport::figure(const std::string& svg,
                        const std::string& caption,
                        const std::string& file) {
  std::string cap = xml_escape(caption);
  if (!file.empty()) cap += fmt::format(" <small>({})</small>", xml_escape(file));
  // The SVG text goes in as markup: strip an XML declaration if one is present.
  std::string body = svg;
  if (body.rfind("<?xml", 0) == 0) body = body.substr(body.find("?>") + 2);
  blocks_.push_back("<figure>" + body + "<figcaption>" + cap + "</figcaption></figure>");
}

std::string HtmlReport::html() const {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  out += "<title>" + xml_escape(title_) + "</title><style>" + kStyle + "</style></head><body>";
  out +=
      "<h1>" + xml_escape(title_) + "</h1><p class=\"subtitle\">" + xml_escape(subtitle_) + "</p>";
  if (!summary_.empty())
    out += fmt::format("<p class=\"{}\">{}</p>", summary_good_ ? "status-ok" : "status-differs",
                       xml_escape(summary_));
  for (const auto& b : blocks_) out += b + "\n";
  return out + "</body></html>\n";
}

}  // namespace attn::experiments
