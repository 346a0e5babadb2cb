#include "experiments/cli/claims_reader.h"

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

namespace attn::experiments {

namespace {

using json = nlohmann::ordered_json;

// A file that is not what it should be; caught at the top of each parse and returned as text.
struct BadFile : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void require(bool ok, const std::string& what) {
  if (!ok) throw BadFile(what);
}

// Texts from a file go to a terminal and a web page: control characters (an escape sequence
// could recolour or clear the terminal) become spaces, and a text is cut at 2000 bytes.
std::string clean(const std::string& s) {
  constexpr size_t kMax = 2000;
  std::string out = cut_utf8(s, kMax);
  for (char& ch : out)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = ' ';
  return s.size() > kMax ? out + " ..." : out;
}

const json& member(const json& obj, const char* key, const std::string& where) {
  const auto it = obj.find(key);
  require(it != obj.end(), fmt::format("{}\"{}\" is missing", where, key));
  return *it;
}

std::string text_member(const json& obj, const char* key, const std::string& where) {
  const json& v = member(obj, key, where);
  require(v.is_string(), fmt::format("{}\"{}\" is not a text", where, key));
  return clean(v.get_ref<const std::string&>());
}

// A document value or ours: a number, a list of numbers, or a text (exact rows). JSON has no
// NaN or infinity: the run writes them as null.
std::string value_text(const json& v, const std::string& where) {
  auto number = [&](const json& x) {
    if (x.is_null()) return std::string("null");
    require(x.is_number(), where + " holds something that is not a number");
    return fmt::format("{:.6g}", x.get<double>());
  };
  if (v.is_string()) return clean(v.get_ref<const std::string&>());
  if (!v.is_array()) return number(v);
  std::string s = "[";
  for (const json& x : v) {
    if (s.size() > 2000) return s + " ...]";
    s += (s.size() > 1 ? " " : "") + number(x);
  }
  return s + "]";
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// The first document code in `text`: "0" and two digits, as a word of its own ("002 §39.2",
// "001 / 000 §1.1"), so that "8,000 tokens" or "512 keys" name no document.
std::string first_document(const std::string& text) {
  for (size_t i = 0; i + 3 <= text.size(); ++i) {
    const bool starts = i == 0 || text[i - 1] == ' ' || text[i - 1] == '(' || text[i - 1] == '/';
    const bool ends =
        i + 3 == text.size() || std::string(" ,:;)/").find(text[i + 3]) != std::string::npos;
    if (starts && ends && text[i] == '0' && is_digit(text[i + 1]) && is_digit(text[i + 2]))
      return text.substr(i, 3);
  }
  return "";
}

// The document and section of a comparison: the title's own reference when it opens with one
// ("002 §39.2: printed output vs ours" -> 002, "002 §39.2"), else the experiment's source.
void place(ClaimRow& row, const std::string& title, const std::string& source) {
  const std::string in_title = first_document(title);
  if (!in_title.empty() && title.rfind(in_title, 0) == 0) {
    size_t end = title.size();
    for (const char* stop : {":", " vs ", ", checked"}) end = std::min(end, title.find(stop));
    row.document = in_title;
    row.section = cut_utf8(title.substr(0, end), 120);
    return;
  }
  row.document = in_title.empty() ? first_document(source) : in_title;
  if (row.document.empty()) row.document = "(none)";
  row.section = source;
}

ClaimRow read_entry(const json& e, const std::string& where) {
  require(e.is_object(), where + " is not an object");
  const std::string at = where + ": ";
  ClaimRow row;
  row.claim = text_member(e, "name", at);
  row.status = text_member(e, "status", at);
  require(row.status == "ok" || row.status == "DIFFERS" || row.status == "not judged",
          fmt::format("{}\"status\" is '{}', not ok, DIFFERS or not judged", at, row.status));
  row.document_value = value_text(member(e, "document", at), where + ".document");
  row.ours = value_text(member(e, "ours", at), where + ".ours");
  row.reason = e.contains("reason") ? text_member(e, "reason", at) : "";
  if (row.status == "not judged")
    row.reason = e.contains("not_judged") ? text_member(e, "not_judged", at) : "(no reason given)";
  return row;
}

void read_comparison(const json& c,
                     const std::string& where,
                     const std::string& source,
                     std::vector<ClaimRow>& rows) {
  require(c.is_object(), where + " is not an object");
  const std::string title = text_member(c, "title", where + ": ");
  const json& entries = member(c, "entries", where + ": ");
  require(entries.is_array(), where + ": \"entries\" is not a list");
  for (size_t i = 0; i < entries.size(); ++i) {
    ClaimRow row = read_entry(entries[i], fmt::format("{}.entries[{}]", where, i));
    row.table = title;
    place(row, title, source);
    rows.push_back(std::move(row));
  }
}

json parse_json(std::string_view text) {
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number like 1e999
    // e.what() opens with "[json.exception.parse_error.101] ": keep the part a reader can use.
    std::string why = e.what();
    if (const size_t cut = why.find("] "); cut != std::string::npos) why = why.substr(cut + 2);
    throw BadFile(fmt::format("not valid JSON (truncated, or not written by attnlab): {}", why));
  }
}

}  // namespace

std::string cut_utf8(const std::string& s, size_t n) {
  if (s.size() <= n) return s;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

std::optional<RunSettings> parse_run_settings(std::string_view text, std::string& problem) {
  try {
    const json j = parse_json(text);
    require(j.is_object(), "the top level is not a JSON object");
    RunSettings s;
    const json& quick = member(j, "quick", "");
    require(quick.is_boolean(), "\"quick\" is not true or false");
    s.quick = quick.get<bool>();
    s.values = member(j, "config", "");
    require(s.values.is_object(), "\"config\" is not an object");
    if (const auto it = j.find("overridden"); it != j.end()) {
      require(it->is_array(), "\"overridden\" is not a list");
      std::vector<std::string> names;
      for (const json& n : *it) {
        require(n.is_string(), "\"overridden\" holds something that is not a field name");
        names.push_back(clean(n.get_ref<const std::string&>()));
      }
      s.overridden = std::move(names);
    }
    return s;
  } catch (const std::exception& e) {  // BadFile, or nlohmann's own (type) errors, bad_alloc
    problem = e.what();
    return std::nullopt;
  }
}

std::optional<RunResults> parse_run_results(std::string_view text, std::string& problem) {
  try {
    const json j = parse_json(text);
    require(j.is_object(), "the top level is not a JSON object");
    RunResults r;
    r.experiment = text_member(j, "experiment", "");
    r.source = text_member(j, "source", "");
    r.status = text_member(j, "status", "");
    require(r.status == "ok" || r.status == "failed",
            fmt::format("\"status\" is '{}', not ok or failed", r.status));
    if (j.contains("error")) r.error = text_member(j, "error", "");
    const json& comparisons = member(j, "comparisons", "");
    require(comparisons.is_array(), "\"comparisons\" is not a list");
    for (size_t c = 0; c < comparisons.size(); ++c)
      read_comparison(comparisons[c], fmt::format("comparisons[{}]", c), r.source, r.rows);
    return r;
  } catch (const std::exception& e) {
    problem = e.what();
    return std::nullopt;
  }
}

std::optional<std::string> read_small_file(const std::filesystem::path& file,
                                           std::string& problem) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(file, ec);
  if (!fs::exists(st)) {
    problem = "missing";
    return std::nullopt;
  }
  if (!fs::is_regular_file(st)) {
    problem = "is not a regular file";
    return std::nullopt;
  }
  const uintmax_t size = fs::file_size(file, ec);
  if (ec || size > kMaxRunFileBytes) {
    problem = ec ? "cannot be read: " + ec.message()
                 : fmt::format("is {} MB, over the {} MB limit for a run's file", size >> 20,
                               kMaxRunFileBytes >> 20);
    return std::nullopt;
  }
  std::ifstream in(file, std::ios::binary);
  std::string text(static_cast<size_t>(size), '\0');
  if (!in || !in.read(text.data(), static_cast<std::streamsize>(size))) {
    problem = "cannot be read";
    return std::nullopt;
  }
  return text;
}

RunFiles read_run_folder(const std::filesystem::path& dir, bool with_results) {
  RunFiles run;
  run.dir = dir;
  std::string problem;
  const std::filesystem::path config = dir / "config.json";
  if (const auto text = read_small_file(config, problem))
    run.settings = parse_run_settings(*text, problem);
  if (!run.settings) run.config_problem = config.string() + ": " + problem;
  if (!with_results) return run;
  problem.clear();
  const std::filesystem::path results = dir / "results.json";
  if (const auto text = read_small_file(results, problem))
    run.results = parse_run_results(*text, problem);
  if (!run.results) run.results_problem = results.string() + ": " + problem;
  return run;
}

}  // namespace attn::experiments
