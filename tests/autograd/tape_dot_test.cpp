// tape_dot and TapeDotCapture: the graph's boxes, leaves and arrows, and the capture of a graph
// that backward() clears.
#include <doctest/doctest.h>

#include <string>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/tape_dot.h"

namespace attn {

namespace {
int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}
}  // namespace

TEST_SUITE("autograd") {
  TEST_CASE("tape_dot: a box per record, learned and constant leaves, solid and dashed arrows") {
    tape().clear();
    Var w = Var::parameter(Tensor::ones({3, 2}), "W");
    Var x = Var::constant(Tensor::ones({4, 3}));
    Var y = sum(softmax(matmul(x, w)));
    const std::string dot = tape_dot(tape());
    CHECK(dot.rfind("digraph tape {", 0) == 0);
    CHECK(count(dot, "shape=box") == 3);
    CHECK(dot.find("label=\"#1 softmax\\nSoftmaxOp\"") != std::string::npos);
    CHECK(dot.find("label=\"#0 matmul\\nMatmulOp\"") != std::string::npos);
    // W: a filled leaf, its arrow solid; x: a grey leaf, its arrow dashed. Both feed record 0.
    CHECK(dot.find("leaf0 [shape=ellipse, label=\"(4,3)\", color=gray50") != std::string::npos);
    CHECK(dot.find("leaf0 -> op0 [label=\"(4,3)\", style=dashed") != std::string::npos);
    CHECK(dot.find("leaf1 [shape=ellipse, label=\"W\\n(3,2)\", style=filled") != std::string::npos);
    CHECK(dot.find("leaf1 -> op0 [label=\"(3,2)\"];") != std::string::npos);
    // Values made on the tape are arrows between boxes; the unread result is the sink.
    CHECK(dot.find("op0 -> op1 [label=\"(4,2)\"];") != std::string::npos);
    CHECK(count(dot, "doubleoctagon") == 1);
    CHECK(dot.find("op2 -> out2;") != std::string::npos);
    tape().clear();
    CHECK(tape_dot(tape()).find("the tape is empty") != std::string::npos);
  }

  TEST_CASE("tape_dot escapes quotes in names") {
    tape().clear();
    Var w = Var::parameter(Tensor::ones({2}), "say \"hi\"");
    Var y = sum(w);
    CHECK(tape_dot(tape()).find("label=\"say \\\"hi\\\"\\n(2)\"") != std::string::npos);
    tape().clear();
  }

  TEST_CASE("TapeDotCapture keeps the first graph backward replays, and only that one") {
    tape().clear();
    Var w = Var::parameter(Tensor::ones({2, 2}));
    TapeDotCapture capture;
    CHECK(capture.records() == 0);
    CHECK(capture.dot().empty());
    sum(tanh(w)).backward();  // 2 records, cleared by backward
    sum(w).backward();        // 1 record: not the first graph
    CHECK(tape().size() == 0);
    CHECK(capture.records() == 2);
    CHECK(capture.dot().find("TanhOp") != std::string::npos);
    CHECK(count(capture.dot(), "shape=box") == 2);
    CHECK_THROWS_WITH_AS(TapeDotCapture(), doctest::Contains("already alive"), Error);
  }

  TEST_CASE("TapeDotCapture: a graph offered by hand or left on the tape counts") {
    tape().clear();
    Var w = Var::parameter(Tensor::ones({2}));
    {
      TapeDotCapture capture;
      Var y = exp(w);
      CHECK(capture.records() == 1);  // still on the tape: read at the end
      CHECK(capture.dot().find("ExpOp") != std::string::npos);
      offer_graph(tape());  // what show_tape does before a caller clears without backward
      tape().clear();
      CHECK(capture.records() == 1);
      CHECK(capture.dot().find("ExpOp") != std::string::npos);
    }
    TapeDotCapture next;  // the first one is gone: a new one may start
    CHECK(next.records() == 0);
  }
}

}  // namespace attn
