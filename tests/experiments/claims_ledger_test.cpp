// The claims ledger (experiments/cli/claims.h): its reader of results.json / config.json on
// good, truncated, wrong-typed, hostile and huge files, the choice of each experiment's run,
// and the counts of its table, JSON and page.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "autograd/error.h"
#include "experiments/cli/claims.h"
#include "experiments/measured_times.h"
#include "experiments/registry.h"
#include "experiments/run_context.h"
#include "experiments/run_settings.h"
#include "tests/scratch_dir.h"

namespace attn::experiments {

namespace {

namespace fs = std::filesystem;

const char* kResults = R"({"experiment": "worked-example", "source": "002 §39.2.1", "status": "ok",
 "comparisons": [
  {"title": "002 §39.2: printed output vs ours", "entries": [
    {"name": "A[0,:]", "status": "ok", "reason": "", "document": [0.401, 0.198], "ours": [0.4, 0.2]},
    {"name": "prose", "status": "DIFFERS", "reason": "rounded", "document": 0.39, "ours": null},
    {"name": "same", "status": "not judged", "reason": "", "not_judged": "--quick run",
     "document": "True", "ours": "True"}]},
  {"title": "FLOPs at 8,000 tokens", "entries": [
    {"name": "flops", "status": "ok", "reason": "", "document": 1, "ours": 1}]}]})";

std::string config_text(bool quick, const std::string& overridden) {
  return std::string(R"({"config": {"scale": 0.5, "seed": 1}, "quick": )") +
         (quick ? "true" : "false") + R"(, "overridden": [)" + overridden + "]}";
}

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

// A run folder runs/worked-example/<name> holding the two files.
void plant_run(const fs::path& runs,
               const std::string& name,
               const std::string& config,
               const std::string& results) {
  write(runs / "worked-example" / name / "config.json", config);
  if (!results.empty()) write(runs / "worked-example" / name / "results.json", results);
}

std::vector<const Experiment*> worked_example_only() {
  return {&find_experiment("worked-example")};
}

}  // namespace

TEST_SUITE("experiments") {
  TEST_CASE("claims ledger: results.json rows, their documents and sections") {
    std::string problem;
    const auto r = parse_run_results(kResults, problem);
    REQUIRE_MESSAGE(r, problem);
    REQUIRE(r->rows.size() == 4);
    CHECK(r->rows[0].document == "002");
    CHECK(r->rows[0].section == "002 §39.2");
    CHECK(r->rows[0].document_value == "[0.401 0.198]");
    CHECK(r->rows[1].status == "DIFFERS");
    CHECK(r->rows[1].reason == "rounded");
    CHECK(r->rows[1].ours == "null");
    CHECK(r->rows[2].reason == "--quick run");
    // "8,000" names no document: the row is filed under the experiment's source.
    CHECK(r->rows[3].document == "002");
    CHECK(r->rows[3].section == "002 §39.2.1");
  }

  TEST_CASE("claims ledger: every truncation of results.json is a problem, never a throw") {
    const std::string text = kResults;
    for (size_t n = 0; n < text.size(); ++n) {
      std::string problem;
      const auto r = parse_run_results(std::string_view(text).substr(0, n), problem);
      INFO("prefix of " << n << " bytes");
      CHECK_FALSE(r);
      CHECK(problem.rfind("not valid JSON (truncated, or not written by attnlab): ", 0) == 0);
    }
  }

  TEST_CASE("claims ledger: wrong types and hostile texts name the field") {
    std::string problem;
    CHECK_FALSE(parse_run_results("[1, 2]", problem));
    CHECK(problem == "the top level is not a JSON object");
    CHECK_FALSE(parse_run_results(
        R"({"experiment": "x", "source": "", "status": "ok", "comparisons": [{"title": "t",
            "entries": [{"name": "n", "status": "fine", "document": 1, "ours": 1}]}]})",
        problem));
    CHECK(problem ==
          "comparisons[0].entries[0]: \"status\" is 'fine', not ok, DIFFERS or not judged");
    CHECK_FALSE(parse_run_results(
        R"({"experiment": "x", "source": "", "status": "ok", "comparisons": [{"title": "t",
            "entries": [{"name": "n", "status": "ok", "document": [1, "2"], "ours": 1}]}]})",
        problem));
    CHECK(problem == "comparisons[0].entries[0].document holds something that is not a number");
    CHECK_FALSE(parse_run_results(R"({"experiment": 3})", problem));
    CHECK(problem == "\"experiment\" is not a text");
    // An escape sequence in a name would reach the terminal: control characters become spaces.
    const auto r = parse_run_results(
        R"({"experiment": "x", "source": "", "status": "ok", "comparisons": [{"title": "t",
            "entries": [{"name": "a\u001b[2Jb", "status": "ok", "document": "<script>",
            "ours": "<script>"}]}]})",
        problem);
    REQUIRE(r);
    CHECK(r->rows[0].claim == "a [2Jb");
    CHECK(r->rows[0].document == "(none)");
  }

  TEST_CASE("claims ledger: config.json settings") {
    std::string problem;
    const auto s = parse_run_settings(config_text(true, R"("seed")"), problem);
    REQUIRE(s);
    CHECK(s->quick);
    REQUIRE(s->overridden);
    CHECK(*s->overridden == std::vector<std::string>{"seed"});
    CHECK_FALSE(parse_run_settings(R"({"config": {}, "quick": "yes"})", problem));
    CHECK(problem == "\"quick\" is not true or false");
  }

  TEST_CASE("claims ledger: a huge or missing file is refused unread") {
    const fs::path dir = attn::testing::scratch_dir("claims_huge");
    std::ofstream(dir / "results.json") << "{";
    fs::resize_file(dir / "results.json", kMaxRunFileBytes + 1);  // sparse: no disk used
    std::string problem;
    CHECK_FALSE(read_small_file(dir / "results.json", problem));
    CHECK(problem == "is 64 MB, over the 64 MB limit for a run's file");
    CHECK_FALSE(read_small_file(dir / "nothing.json", problem));
    CHECK(problem == "missing");
    CHECK_FALSE(read_small_file(dir, problem));
    CHECK(problem == "is not a regular file");
  }

  TEST_CASE("claims ledger: the latest default-setting run is chosen, others are noted") {
    const fs::path runs = attn::testing::scratch_dir("claims_choice");
    plant_run(runs, "20260101-100000", config_text(false, ""), kResults);
    plant_run(runs, "20260101-110000", config_text(false, R"("seed")"), kResults);  // a --seed
    plant_run(runs, "20260101-120000", config_text(true, ""), kResults);            // --quick
    Ledger ledger = gather_ledger(runs, false, worked_example_only());
    REQUIRE(ledger.entries.size() == 1);
    CHECK(ledger.entries[0].state == RunState::kOk);
    CHECK(ledger.entries[0].run == "worked-example/20260101-100000");
    CHECK(ledger.entries[0].rows.size() == 4);
    CHECK(ledger.entries[0].notes.size() == 1);
    // --quick: the quick run, every row not judged whatever its file says.
    ledger = gather_ledger(runs, true, worked_example_only());
    CHECK(ledger.entries[0].run == "worked-example/20260101-120000");
    for (const ClaimRow& row : ledger.entries[0].rows) CHECK(row.status == "not judged");
    // "-10" is newer than "-9" (two runs started in the same second).
    plant_run(runs, "20260101-100000-9", config_text(false, ""), kResults);
    plant_run(runs, "20260101-100000-10", config_text(false, ""), kResults);
    ledger = gather_ledger(runs, false, worked_example_only());
    CHECK(ledger.entries[0].run == "worked-example/20260101-100000-10");
  }

  TEST_CASE("claims ledger: an unreadable latest run is reported, not replaced by an older one") {
    const fs::path runs = attn::testing::scratch_dir("claims_unreadable");
    plant_run(runs, "20260101-100000", config_text(false, ""), kResults);
    plant_run(runs, "20260101-110000", config_text(false, ""), std::string(kResults).substr(0, 99));
    Ledger ledger = gather_ledger(runs, false, worked_example_only());
    const LedgerEntry& e = ledger.entries[0];
    CHECK(e.state == RunState::kUnreadable);
    CHECK(e.rows.empty());
    CHECK(e.problem.find("20260101-110000/results.json: not valid JSON") != std::string::npos);
    CHECK(num_unreadable(ledger) == 1);
    CHECK(ledger_text(ledger).find("older runs are not used in its place") != std::string::npos);
    // A results.json of another experiment is no run of this one.
    plant_run(runs, "20260101-120000", config_text(false, ""),
              R"({"experiment": "anagrams", "source": "", "status": "ok", "comparisons": []})");
    ledger = gather_ledger(runs, false, worked_example_only());
    CHECK(ledger.entries[0].problem.find("names the experiment 'anagrams'") != std::string::npos);
    // No run at all: listed as such.
    ledger = gather_ledger(runs / "elsewhere", false, worked_example_only());
    CHECK(ledger.entries[0].state == RunState::kNoRun);
    CHECK(ledger_text(ledger).find("no run") != std::string::npos);
  }

  TEST_CASE("claims ledger: a real run's rows, counted in the table, JSON and page") {
    const fs::path runs = attn::testing::scratch_dir("claims_real");
    const Experiment& e = find_experiment("worked-example");
    RunOptions o;
    o.out = new_run_dir_in(runs, e.name);
    o.echo = false;
    {
      RunContext ctx(e, e.config, o);
      e.run(ctx.config(), ctx);
      ctx.finish(0.1);
      const Ledger ledger = gather_ledger(runs, false, worked_example_only());
      REQUIRE(ledger.entries[0].state == RunState::kOk);
      size_t rows = 0;
      int differ = 0;
      for (const auto& c : ctx.comparisons()) rows += c.entries().size(), differ += c.num_differ();
      CHECK(ledger.entries[0].rows.size() == rows);
      const nlohmann::ordered_json j = ledger_json(ledger);
      CHECK(j["claims"].size() == rows);
      int json_differ = 0;
      for (const auto& d : j["documents"]) json_differ += d["differs"].get<int>();
      CHECK(json_differ == differ);
      const std::string html = ledger_html(ledger);
      size_t html_rows = 0;
      for (size_t at = 0; (at = html.find("<tr class=\"claim", at)) != std::string::npos; ++at)
        ++html_rows;
      CHECK(html_rows == rows);
      CHECK(html.find("href=\"worked-example/" + o.out.filename().string() + "/report.html\"") !=
            std::string::npos);
    }
    // The run recorded that no field was overridden; a --seed is an override.
    std::string problem;
    const auto text = read_small_file(o.out / "config.json", problem);
    REQUIRE(text);
    const auto settings = parse_run_settings(*text, problem);
    REQUIRE(settings);
    CHECK(settings->overridden == std::vector<std::string>{});
    Config seeded = e.config;
    seeded.set("seed", "7");
    CHECK(overridden_fields(e, seeded.to_json(), false) == std::vector<std::string>{"seed"});
  }

  TEST_CASE("claims ledger: the list's times are the measured ones") {
    CHECK(time_text(0.4) == "< 1 s");
    CHECK(time_text(51.6) == "~52 s");
    CHECK(time_text(140) == "~2.5 min");
    CHECK(time_text(755) == "~13 min");
    for (const Experiment* e : catalogue()) {  // the list shows the measurement, or says none
      INFO(e->name << ": '" << e->typical_time << "'");
      const auto measured = measured_seconds(e->name);
      CHECK(e->typical_time == (measured ? time_text(*measured) : "not measured"));
    }
  }

  TEST_CASE("claims ledger: bad words for claims and run --all are usage errors") {
    CHECK_THROWS_AS(run_all_command({"--all", "anagrams"}, "t"), UsageError);
    CHECK_THROWS_AS(run_all_command({"--all", "--iters", "3"}, "t"), UsageError);
    CHECK_THROWS_WITH_AS(run_all_command({"--all", "--only", "anagram"}, "t"),
                         doctest::Contains("Did you mean anagrams?"), UsageError);
    CHECK_THROWS_AS(claims_command({"--bogus"}, "t"), UsageError);
    CHECK_THROWS_WITH_AS(claims_command({"--runs", "/nonexistent/runs"}, "t"),
                         doctest::Contains("no runs folder '/nonexistent/runs'"), UsageError);
    CHECK(asks_for_all({"--quick", "--all"}));
    CHECK_FALSE(asks_for_all({"anagrams", "--allow", "1"}));
  }
}

}  // namespace attn::experiments
