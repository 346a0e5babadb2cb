// The ledger's three forms: the terminal tables, claims.json and claims.html.
#include <cctype>

#include <fmt/format.h>

#include "autograd/safetensors.h"
#include "experiments/cli/claims.h"
#include "experiments/report/html.h"
#include "experiments/report/table.h"

namespace attn::experiments {

namespace {

// At most `n` bytes of `s`, cut at a character boundary, "..." marking the cut (terminal only:
// the JSON and the page keep the whole text).
std::string shorten(const std::string& s, size_t n) {
  return s.size() <= n ? s : cut_utf8(s, n - 3) + "...";
}

std::string mode_words(const Ledger& ledger) {
  return ledger.quick ? "the latest --quick run of each experiment (every row not judged)"
                      : "the latest default-setting run of each experiment";
}

std::string summary_line(const Ledger& ledger) {
  int claims = 0, ok = 0, differ = 0, unjudged = 0, with_rows = 0, no_run = 0;
  for (const DocumentCounts& c : document_counts(ledger))
    claims += c.claims, ok += c.ok, differ += c.differ, unjudged += c.not_judged;
  for (const LedgerEntry& e : ledger.entries) {
    with_rows += !e.rows.empty();
    no_run += e.state == RunState::kNoRun;
  }
  return fmt::format(
      "{} claims from {} of {} experiments: {} agree, {} DIFFER, {} not judged; {} without a "
      "run, {} unreadable.",
      claims, with_rows, ledger.entries.size(), ok, differ, unjudged, no_run,
      num_unreadable(ledger));
}

// The experiments that give no rows or whose run has a problem, and why.
Table problems_table(const Ledger& ledger) {
  Table t("Experiments without rows, or with a problem", {"experiment", "state", "run", "detail"});
  for (const LedgerEntry& e : ledger.entries) {
    if (e.state == RunState::kOk && !e.rows.empty()) continue;
    std::string detail = e.problem;
    if (e.state == RunState::kOk) detail = "the run compares no document number";
    for (const std::string& note : e.notes) detail += (detail.empty() ? "" : "; ") + note;
    t.add_row({e.experiment, run_state_name(e.state), e.run, detail});
    if (e.state == RunState::kUnreadable || e.state == RunState::kFailed) t.flag_last_row();
  }
  return t;
}

Table counts_table(const Ledger& ledger) {
  Table t("Per document", {"document", "claims", "agree", "DIFFERS", "not judged"});
  for (const DocumentCounts& c : document_counts(ledger))
    t.add_row({c.document, std::to_string(c.claims), std::to_string(c.ok), std::to_string(c.differ),
               std::to_string(c.not_judged)});
  return t;
}

// "a b/c" -> "a%20b/c": a run folder's path as a link (its name is whatever the disk holds).
std::string url_path(const std::string& path) {
  std::string out;
  for (const unsigned char ch : path) {
    const bool plain = std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '/';
    out += plain ? std::string(1, static_cast<char>(ch)) : fmt::format("%{:02X}", ch);
  }
  return out;
}

std::string report_link(const LedgerEntry& e) {
  if (e.run.empty()) return xml_escape(e.experiment);
  return fmt::format("<a href=\"{}/report.html\">{}</a>", url_path(e.run),
                     xml_escape(e.experiment));
}

const char* status_class(const std::string& status) {
  return status == "ok" ? "status-ok" : status == "DIFFERS" ? "status-differs" : "status-unjudged";
}

// One document's rows: section, claim, the two values, the experiment (linked to its report),
// status and reason.
std::string document_table(const Ledger& ledger, const std::string& document) {
  std::string out =
      "<table class=\"ledger\"><thead><tr><th>section</th><th>claim</th><th>document</th>"
      "<th>ours</th><th>experiment</th><th>status</th><th>reason</th></tr></thead><tbody>";
  for (const LedgerEntry& e : ledger.entries)
    for (const ClaimRow& r : e.rows) {
      if (r.document != document) continue;
      out += fmt::format(
          "<tr class=\"claim{}\"><td>{}</td><td>{}</td><td class=\"num\">{}</td>"
          "<td class=\"num\">{}</td><td>{}</td><td class=\"{}\">{}</td><td>{}</td></tr>",
          r.status == "DIFFERS" ? " flag" : "", xml_escape(r.section), xml_escape(r.claim),
          xml_escape(r.document_value), xml_escape(r.ours), report_link(e), status_class(r.status),
          xml_escape(r.status), xml_escape(r.reason));
    }
  return out + "</tbody></table>";
}

std::string experiments_table(const Ledger& ledger) {
  std::string out =
      "<table><thead><tr><th>experiment</th><th>source</th><th>state</th><th>claims</th>"
      "<th>detail</th></tr></thead><tbody>";
  for (const LedgerEntry& e : ledger.entries) {
    std::string detail = e.problem;
    for (const std::string& note : e.notes) detail += (detail.empty() ? "" : "; ") + note;
    const bool bad = e.state == RunState::kUnreadable || e.state == RunState::kFailed;
    out += fmt::format(
        "<tr class=\"experiment{}\"><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td>"
        "<td>{}</td></tr>",
        bad ? " flag" : "", report_link(e), xml_escape(e.source), run_state_name(e.state),
        e.rows.size(), xml_escape(detail));
  }
  return out + "</tbody></table>";
}

}  // namespace

std::string ledger_text(const Ledger& ledger) {
  Table t("Claims: " + mode_words(ledger) + " in " + ledger.runs.string(),
          {"document", "section", "claim", "document's", "ours", "status", "reason", "experiment",
           "run"});
  for (const LedgerEntry& e : ledger.entries)
    for (const ClaimRow& r : e.rows) {
      t.add_row({r.document, shorten(r.section, 28), shorten(r.claim, 40),
                 shorten(r.document_value, 24), shorten(r.ours, 24), r.status,
                 shorten(r.reason, 50), e.experiment, shorten(e.run, 40)});
      if (r.status == "DIFFERS") t.flag_last_row();
    }
  std::string out = t.text() + "\n" + counts_table(ledger).text();
  const Table problems = problems_table(ledger);
  if (!problems.rows().empty()) out += "\n" + problems.text();
  return out + "\n" + summary_line(ledger) + "\n";
}

nlohmann::ordered_json ledger_json(const Ledger& ledger) {
  using json = nlohmann::ordered_json;
  json documents = json::array(), experiments = json::array(), claims = json::array();
  for (const DocumentCounts& c : document_counts(ledger))
    documents.push_back({{"document", c.document},
                         {"claims", c.claims},
                         {"ok", c.ok},
                         {"differs", c.differ},
                         {"not_judged", c.not_judged}});
  for (const LedgerEntry& e : ledger.entries) {
    experiments.push_back({{"experiment", e.experiment},
                           {"source", e.source},
                           {"state", run_state_name(e.state)},
                           {"run", e.run},
                           {"problem", e.problem},
                           {"notes", e.notes},
                           {"claims", e.rows.size()}});
    for (const ClaimRow& r : e.rows)
      claims.push_back({{"document", r.document},
                        {"section", r.section},
                        {"table", r.table},
                        {"claim", r.claim},
                        {"document_value", r.document_value},
                        {"ours", r.ours},
                        {"status", r.status},
                        {"reason", r.reason},
                        {"experiment", e.experiment},
                        {"run", e.run}});
  }
  return {{"runs", ledger.runs.string()},
          {"selection", mode_words(ledger)},
          {"quick", ledger.quick},
          {"summary", summary_line(ledger)},
          {"documents", documents},
          {"experiments", experiments},
          {"claims", claims}};
}

std::string ledger_html(const Ledger& ledger) {
  HtmlReport page("Claims ledger", "Every comparison row of the catalogue: " + mode_words(ledger) +
                                       " in " + ledger.runs.string());
  int differ = 0;
  for (const DocumentCounts& c : document_counts(ledger)) differ += c.differ;
  page.summary(summary_line(ledger), differ == 0 && num_unreadable(ledger) == 0);
  page.paragraph(
      "A row is ok when ours is within the tolerance of the document's value, DIFFERS when it "
      "is not (the reason says why, when known), and not judged when the run could not judge "
      "it (a --quick run, a model that did not train, too few samples). A comparison that "
      "cites several documents is filed under the first one it names.");
  page.table(counts_table(ledger));
  // Claims and reasons are sentences: let them wrap (the report style keeps cells on one line).
  page.raw(
      "<style>table.ledger td { white-space: normal; } table.ledger td.num { white-space: "
      "nowrap; } table.ledger td:last-child { min-width: 18em; }</style>");
  for (const DocumentCounts& c : document_counts(ledger)) {
    page.heading("Document " + c.document);
    page.paragraph(fmt::format("{} claims checked: {} agree, {} DIFFER, {} not judged.", c.claims,
                               c.ok, c.differ, c.not_judged));
    page.raw(document_table(ledger, c.document));
  }
  page.heading("Experiments");
  page.raw(experiments_table(ledger));
  return page.html();
}

void publish_ledger(const Ledger& ledger) {
  fmt::print("\n{}", ledger_text(ledger));
  std::filesystem::create_directories(ledger.runs);
  const std::filesystem::path json_file = ledger.runs / "claims.json";
  const std::filesystem::path html_file = ledger.runs / "claims.html";
  write_file_atomically(
      json_file.string(),
      ledger_json(ledger).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) +
          "\n");
  write_file_atomically(html_file.string(), ledger_html(ledger));
  fmt::print("ledger: {}\n        {}\n", json_file.string(), html_file.string());
}

}  // namespace attn::experiments
