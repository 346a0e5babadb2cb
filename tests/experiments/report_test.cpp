// The report writers: the document comparison, tables, SVG figures and the HTML page.
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/error.h"
#include "experiments/report/charts.h"
#include "experiments/report/compare.h"
#include "experiments/report/heatmap.h"
#include "experiments/report/html.h"
#include "experiments/report/scale.h"

namespace attn::experiments {

namespace {
size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}
}  // namespace

TEST_SUITE("experiments") {
  TEST_CASE("comparison: ok within tolerance, DIFFERS beyond it, with the reason") {
    DocumentComparison c("doc vs ours");
    c.add("a", 0.401, 0.40106, 5e-4);
    c.add("b", {0.39, 0.22}, {0.401, 0.198}, 5e-3, "prose slip", 2);
    c.add("nan", 1.0, NAN, 1.0);
    c.add_exact("flag", "True", "True");
    c.add_exact("flag2", "True", "False", "why");
    REQUIRE(c.entries().size() == 5);
    CHECK(c.entries()[0].agrees);
    CHECK_FALSE(c.entries()[1].agrees);
    CHECK(c.entries()[1].max_diff == doctest::Approx(0.022));
    CHECK(c.entries()[1].document_text == "[0.39 0.22]");
    CHECK_FALSE(c.entries()[2].agrees);  // a NaN is never within tolerance
    CHECK(c.entries()[3].agrees);
    CHECK_FALSE(c.entries()[4].agrees);
    CHECK(c.num_differ() == 3);
    const std::string text = c.table().text();
    CHECK(text.find("! b") != std::string::npos);  // flagged row
    CHECK(text.find("DIFFERS  prose slip") != std::string::npos);
    const auto j = c.to_json();
    CHECK(j["differ"] == 3);
    CHECK(j["entries"][1]["status"] == "DIFFERS");
    CHECK(j["entries"][1]["reason"] == "prose slip");
    CHECK_THROWS_AS(c.add("bad", std::vector<double>{1, 2}, std::vector<double>{1}, 0), Error);
  }

  TEST_CASE("comparison: a row the run cannot judge says so, with the reason, never ok") {
    DocumentComparison c("claims");
    c.add_exact("learns the task", "yes", "yes").needs_training(0.158, 0.412);
    c.add("rate", 0.15, 0.31, 0.01).needs_samples(12, 30);
    c.add("judged", 0.15, 0.31, 0.01, "too high");
    c.add_exact("plain", "yes", "yes").not_judged_if(false, "never");
    const auto& e = c.entries();
    CHECK(e[0].status() == ClaimStatus::kNotJudged);
    CHECK(e[0].outcome() == ClaimStatus::kOk);
    CHECK(e[0].not_judged_reason == "model did not train (final accuracy 0.158 < 0.412)");
    CHECK(e[1].status() == ClaimStatus::kNotJudged);
    CHECK(e[1].not_judged_reason == "too few samples (n=12 < 30)");
    CHECK(e[2].status() == ClaimStatus::kDiffers);
    CHECK(e[3].status() == ClaimStatus::kOk);
    CHECK(c.num_differ() == 1);  // a DIFFERS outcome that is not judged does not count
    CHECK(c.num_not_judged() == 2);
    // A NaN accuracy never counts as trained.
    CHECK_FALSE(DocumentComparison().add_exact("x", "a", "a").needs_training(NAN, 0).judged());
    CHECK_THROWS_AS(DocumentComparison().add_exact("x", "a", "a").not_judged_if(true, ""), Error);

    c.not_judged("--quick run");  // what RunContext::compare does in a --quick run
    CHECK(c.num_differ() == 0);
    CHECK(c.num_not_judged() == 4);
    CHECK(e[0].not_judged_reason ==
          "--quick run; model did not train (final accuracy 0.158 < 0.412)");
    const std::string text = c.table().text();
    CHECK(text.find("ok ") == std::string::npos);
    CHECK(text.find("not judged  --quick run (outside the tolerance: too high)") !=
          std::string::npos);
    const auto j = c.to_json();
    CHECK(j["entries"][2]["status"] == "not judged");
    CHECK(j["entries"][2]["outcome"] == "DIFFERS");
    CHECK(j["entries"][2]["not_judged"] == "--quick run");
    CHECK(j["not_judged"] == 4);
    CHECK(agreement_summary(5, 1, 2) == "2 of 5 entries agree, 1 DIFFERS, 2 not judged");
  }

  TEST_CASE("comparison: ours equal to the document bit for bit is recorded") {
    DocumentComparison c;
    const double doc = 0.3196;
    c.add("copied", doc, doc, 0.01);
    c.add("measured", doc, std::nextafter(doc, 1.0), 0.01);
    c.add("count", 31, 31, 0).exact_quantity();
    CHECK(c.entries()[0].ours_is_document());
    CHECK_FALSE(c.entries()[1].ours_is_document());
    CHECK(c.entries()[2].ours_is_document());
    const auto j = c.to_json();
    CHECK(j["entries"][0]["ours_is_document"] == true);
    CHECK(j["entries"][0]["exact_quantity"] == false);
    CHECK(j["entries"][2]["exact_quantity"] == true);
    CHECK_THROWS_AS(c.add_exact("text", "a", "a").exact_quantity(), Error);
  }

  TEST_CASE("comparison: add_rows compares each row of a matrix") {
    DocumentComparison c;
    c.add_rows("A", {{1, 2}, {3, 4}}, Tensor::from_vector({2, 2}, {1, 2, 3, 4.01f}), 5e-3);
    REQUIRE(c.entries().size() == 2);
    CHECK(c.entries()[0].name == "A[0,:]");
    CHECK(c.entries()[0].agrees);
    CHECK_FALSE(c.entries()[1].agrees);
    CHECK_THROWS_AS(c.add_rows("B", {{1, 2}}, Tensor::zeros({2, 2}), 0), Error);
  }

  TEST_CASE("table: matrix formatting and alignment") {
    Table t = Table::matrix("M", Tensor::from_vector({2, 2}, {1, -0.0001f, 0.5f, 2}), {"r0", "r1"},
                            {"c0", "c1"}, 3);
    CHECK(t.rows()[0][2] == "0.000");  // no "-0.000"
    CHECK(t.text().find("r1  0.500  2.000") != std::string::npos);
    CHECK(t.html().find("<td class=\"num\">0.500</td>") != std::string::npos);
    CHECK_THROWS_AS(t.add_row({"only one"}), Error);
    CHECK(sig(1234567) == "1.23e+06");
    CHECK(sig(0.0123) == "0.0123");
    CHECK(xml_escape("a<b & \"c\"") == "a&lt;b &amp; &quot;c&quot;");
  }

  TEST_CASE("scales: viridis ends, ticks and token labels") {
    CHECK(viridis(0) == "#440154");
    CHECK(viridis(1) == "#fde725");
    CHECK(viridis(-3) == viridis(0));
    const std::vector<double> ticks = nice_ticks(0, 0.37, 5);
    REQUIRE(ticks.size() == 4);
    for (size_t i = 0; i < 4; ++i) CHECK(ticks[i] == doctest::Approx(0.1 * i));
    const std::vector<double> few = log_ticks(3e-2, 4);  // 3 decades or fewer: 1, 2, 5 steps
    CHECK(few.front() == doctest::Approx(0.05));
    CHECK(few.back() == doctest::Approx(2));
    CHECK(few.size() == 6);  // 0.05 0.1 0.2 0.5 1 2
    CHECK(log_ticks(1, 1e6) == std::vector<double>{1, 10, 100, 1e3, 1e4, 1e5, 1e6});
    // 44 decades: every 5th power of ten (1e-40, 1e-35, ..., 1), not 45 crowded labels.
    const std::vector<double> many = log_ticks(3e-43, 20);
    REQUIRE(many.size() == 9);
    CHECK(std::log10(many.front()) == doctest::Approx(-40));
    CHECK(many.back() == doctest::Approx(1));
    CHECK(display_token(" ") == "\u2423");
    CHECK(display_token("a") == "a");
  }

  TEST_CASE("heatmap SVG: one cell per entry, both axes labelled, a colour bar") {
    Heatmap h{.values = Tensor::from_vector({2, 3}, {0.1f, 0.2f, 0.7f, 0.3f, 0.3f, 0.4f}),
              .row_labels = {"q<0>", "q1"},
              .col_labels = {"a", "b", "c"},
              .title = "T",
              .colorbar_label = "weight"};
    const std::string svg = heatmap_svg(h);
    CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
    CHECK(count(svg, "<title>") == 6);  // one tooltip per cell
    CHECK(svg.find(">q&lt;0&gt;</text>") != std::string::npos);
    CHECK(svg.find("<text x=") != std::string::npos);
    CHECK(svg.find(">weight</text>") != std::string::npos);
    CHECK(svg.find("linearGradient") != std::string::npos);
    CHECK(svg.find(viridis(1)) != std::string::npos);  // the largest entry (0.7 = max) is yellow
    h.row_labels = {"only one"};
    CHECK_THROWS_AS(heatmap_svg(h), Error);
    h.row_labels = {};
    const std::string grid = heatmap_grid_svg({h, h, h}, 2, "grid");
    CHECK(count(grid, "<title>") == 18);
    CHECK(count(grid, "linearGradient id=") == 1);  // one shared colour bar
    CHECK(heatmap_svg(h).find("attn-grad") != std::string::npos);
    CHECK(heatmap_svg(h) != heatmap_svg(h));  // gradient ids are unique in a page
  }

  TEST_CASE("charts: bars with a highlighted bar, line plots on log axes") {
    BarChart b;
    b.labels = {"x", "y", "z"};
    b.series = {{"w", {0.2, 0.5, 0.3}}};
    b.highlight = 1;
    const std::string bars = bar_chart_svg(b);
    CHECK(count(bars, "fill=\"#ef4444\"") == 1);
    b.series[0].values.pop_back();
    CHECK_THROWS_AS(bar_chart_svg(b), Error);

    // Stacked: one bar per label, the axis reaches the sum of the parts, not the largest part.
    BarChart st;
    st.labels = {"x"};
    st.series = {{"a", {0.25}}, {"b", {0.75}}};
    CHECK(bar_chart_svg(st).find(">1</text>") == std::string::npos);
    st.stacked = true;
    const std::string stacked = bar_chart_svg(st);
    CHECK(stacked.find(">1</text>") != std::string::npos);
    CHECK(stacked.find("x b: 0.75") != std::string::npos);

    LinePlot p;
    p.series = {{"s", {1, 10, 100}, {0.0, 2, 30}}};  // y = 0 cannot be drawn on a log axis
    p.refs = {{RefLine::kHorizontal, 0.37, "0.99^100"}};
    p.log_x = p.log_y = true;
    const std::string svg = line_plot_svg(p);
    CHECK(count(svg, "<circle") == 2);
    CHECK(svg.find("0.99^100") != std::string::npos);
    CHECK(svg.find("stroke-dasharray") != std::string::npos);
    p.series[0].y.pop_back();
    CHECK_THROWS_AS(line_plot_svg(p), Error);
  }

  TEST_CASE("html: self-contained page with tables, figures and the comparison") {
    HtmlReport page("title <x>", "sub");
    page.paragraph("line one\nline two\n\nsecond paragraph");
    DocumentComparison c;
    c.add("v", 1, 2, 0.5, "known");
    page.comparison(c);
    page.figure("<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>", "cap", "figures/f.svg");
    const std::string html = page.html();
    CHECK(html.find("<title>title &lt;x&gt;</title>") != std::string::npos);
    CHECK(html.find("<p>line one line two</p><p>second paragraph</p>") != std::string::npos);
    CHECK(html.find("<tr class=\"flag\">") != std::string::npos);
    CHECK(html.find("0 of 1 entries agree, 1 DIFFERS") != std::string::npos);
    CHECK(html.find("<figure><svg") != std::string::npos);
    CHECK(html.find("<script") == std::string::npos);
    CHECK(html.find("<link") == std::string::npos);
    CHECK(count(html, "http") == 1);  // only the SVG namespace, never a fetch
  }
}

}  // namespace attn::experiments
