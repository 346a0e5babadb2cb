// libFuzzer harness: the claims ledger's reader of a run's results.json and config.json
// (experiments/cli/claims_reader.h), which `attnlab claims` points at whatever lies under runs/.
//
//   scripts/fuzz claims 600
//
// Every input is given to both parsers as the text of the file. The contract checked: the
// parse returns a value or a non-empty problem and never throws (a truncated, non-JSON,
// wrong-typed or hostile file is a sentence, not a crash); a row it accepts has one of the
// three status words, a reason when not judged, and no control character in any text (the
// texts go to a terminal and a web page). The first half of the input (a file cut short by a
// run killed while writing) is read again under the same contract.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "experiments/cli/claims_reader.h"

namespace {

namespace ex = attn::experiments;

[[noreturn]] void bug(const std::string& what) {
  std::fprintf(stderr, "fuzz_claims: %s\n", what.c_str());
  std::abort();
}

void check_text(const std::string& s, const char* field) {
  for (const char c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      bug(std::string("a control character in a row's ") + field);
}

void check_results(std::string_view text) {
  std::string problem;
  const auto results = ex::parse_run_results(text, problem);
  if (!results) {
    if (problem.empty()) bug("results.json refused without a problem");
    return;
  }
  for (const ex::ClaimRow& r : results->rows) {
    if (r.status != "ok" && r.status != "DIFFERS" && r.status != "not judged")
      bug("a row with the status '" + r.status + "'");
    if (r.status == "not judged" && r.reason.empty()) bug("a row not judged without a reason");
    if (r.document.empty() || r.section.size() > 4000) bug("a row without its document");
    for (const auto& [s, f] : {std::pair{&r.claim, "claim"},
                               {&r.ours, "ours"},
                               {&r.document_value, "document value"},
                               {&r.reason, "reason"},
                               {&r.section, "section"}})
      check_text(*s, f);
  }
}

void check_settings(std::string_view text) {
  std::string problem;
  const auto settings = ex::parse_run_settings(text, problem);
  if (!settings && problem.empty()) bug("config.json refused without a problem");
  if (settings && !settings->values.is_object()) bug("config.json accepted without its fields");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check_results(text);
  check_settings(text);
  // A file cut short by a run killed while writing.
  check_results(text.substr(0, size / 2));
  return 0;
}
