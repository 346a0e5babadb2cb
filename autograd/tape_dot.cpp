#include "autograd/tape_dot.h"

#include <cxxabi.h>
#include <fmt/format.h>

#include <cstdlib>
#include <initializer_list>
#include <map>
#include <memory>
#include <typeinfo>

#include "autograd/error.h"

namespace attn {

namespace {

// "attn::SoftmaxOp" -> "SoftmaxOp": the struct a student types after `break`.
std::string struct_name(const Op& op) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> full(
      abi::__cxa_demangle(typeid(op).name(), nullptr, nullptr, &status), std::free);
  std::string name = status == 0 && full ? full.get() : typeid(op).name();
  const size_t colons = name.rfind("::");
  return colons == std::string::npos ? name : name.substr(colons + 2);
}

// A dot string literal of the lines: quotes and backslashes escaped, lines joined with \n.
std::string quoted(std::initializer_list<std::string> lines) {
  std::string out = "\"";
  bool first = true;
  for (const std::string& line : lines) {
    if (!first) out += "\\n";
    first = false;
    for (char c : line) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
  }
  return out + "\"";
}

std::string value_label(const Var& v) {
  return v.name().empty() ? quoted({shape_str(v.shape())})
                          : quoted({v.name(), shape_str(v.shape())});
}

}  // namespace

std::string tape_dot(const Tape& tape) {
  std::string out =
      "digraph tape {\n"
      "  rankdir=TB;\n"
      "  node [fontname=\"Helvetica\", fontsize=10];\n"
      "  edge [fontname=\"Helvetica\", fontsize=9];\n";
  if (tape.size() == 0) return out + "  empty [shape=note, label=\"the tape is empty\"];\n}\n";

  // Which record made each value (values no record made are leaves), and which are read.
  std::map<const Node*, size_t> producer;
  std::map<const Node*, bool> consumed;
  std::map<const Node*, std::string> leaf_id;
  for (size_t i = 0; i < tape.size(); ++i) {
    const Op& op = tape.record(i);
    for (const Var& in : op.inputs) consumed[&in.node()] = true;
  }

  for (size_t i = 0; i < tape.size(); ++i) {
    const Op& op = tape.record(i);
    out += fmt::format("  op{} [shape=box, style=rounded, label={}];\n", i,
                       quoted({fmt::format("#{} {}", i, op.name()), struct_name(op)}));
    for (const Var& in : op.inputs) {
      const Node* n = &in.node();
      std::string from;
      if (auto it = producer.find(n); it != producer.end()) {
        from = fmt::format("op{}", it->second);
      } else if (auto leaf = leaf_id.find(n); leaf != leaf_id.end()) {
        from = leaf->second;
      } else {
        from = fmt::format("leaf{}", leaf_id.size());
        leaf_id[n] = from;
        out += fmt::format("  {} [shape=ellipse, label={}{}];\n", from, value_label(in),
                           in.requires_grad() ? ", style=filled, fillcolor=\"#cfe3ff\""
                                              : ", color=gray50, fontcolor=gray30");
      }
      // Solid: backward sends a gradient back along this arrow; dashed: it does not.
      out += fmt::format("  {} -> op{} [label={}{}];\n", from, i, quoted({shape_str(in.shape())}),
                         in.requires_grad() ? "" : ", style=dashed, color=gray50");
    }
    producer[&op.output.node()] = i;
    if (!consumed.count(&op.output.node()))
      out += fmt::format("  out{0} [shape=doubleoctagon, label={1}];\n  op{0} -> out{0};\n", i,
                         value_label(op.output));
  }
  return out + "}\n";
}

namespace {
thread_local TapeDotCapture* g_capture = nullptr;
}  // namespace

void offer_graph(const Tape& tape) {
  TapeDotCapture* c = g_capture;
  if (c == nullptr || c->records_ > 0 || tape.size() == 0) return;
  c->dot_ = tape_dot(tape);
  c->records_ = tape.size();
}

TapeDotCapture::TapeDotCapture() {
  if (g_capture != nullptr) throw Error("TapeDotCapture: one is already alive on this thread");
  g_capture = this;
}

TapeDotCapture::~TapeDotCapture() {
  g_capture = nullptr;
}

std::string TapeDotCapture::dot() const {
  if (records_ > 0) return dot_;
  return tape().size() > 0 ? tape_dot(tape()) : "";
}

size_t TapeDotCapture::records() const {
  return records_ > 0 ? records_ : tape().size();
}

}  // namespace attn
