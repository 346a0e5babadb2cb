// The tape as a picture: Graphviz dot text of the recorded graph.
//
//   attn::Var y = attn::softmax(attn::matmul(x, w));
//   std::string dot = attn::tape_dot(attn::tape());   // `dot -Tsvg` draws it
//
//   attn::TapeDotCapture capture;        // keeps the first graph this thread records ...
//   run_something();                     // ... although backward() clears the tape
//   std::string first = capture.dot();
//
// In the picture every record is a box ("#2 softmax" over its struct, "SoftmaxOp", the name a
// breakpoint takes) and every leaf is an ellipse: a value to learn (requires_grad, filled) or a
// constant (grey). An arrow carries a value from where it is made to the op that reads it,
// labelled with its shape; it is solid when that input needs a gradient (backward will send one
// back along it) and dashed when it does not. An output no record reads (the loss) is the double
// octagon.
#pragma once

#include <string>

#include "autograd/tape.h"

namespace attn {

// The whole tape as a `digraph`; an empty tape gives a graph with one note saying so.
std::string tape_dot(const Tape& tape);

// While alive, remembers the dot text of the first non-empty graph offered to it on this
// thread: backward() offers the tape before it replays (and then clears) it, and code that clears
// a tape it recorded without a backward can offer it first (offer_graph). Not nestable.
class TapeDotCapture {
 public:
  TapeDotCapture();
  ~TapeDotCapture();
  TapeDotCapture(const TapeDotCapture&) = delete;
  TapeDotCapture& operator=(const TapeDotCapture&) = delete;

  // The first graph offered; if none was, the tape as it is now (a run may end with its graph
  // still recorded); empty when nothing was ever recorded.
  std::string dot() const;
  // Records in that graph.
  size_t records() const;

 private:
  friend void offer_graph(const Tape& tape);
  std::string dot_;
  size_t records_ = 0;
};

// Hands the tape to this thread's TapeDotCapture, if one is alive and has no graph yet (cheap
// otherwise: one thread-local read). Var::backward calls it.
void offer_graph(const Tape& tape);

}  // namespace attn
