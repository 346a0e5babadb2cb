// The recorded graph in a run's output: as a picture in the report, and as the --tape-dot file.
//
//   show_tape(ctx, tape());                   // the listing, and the picture when dot is installed
//
//   TapeDotOutput out(request.tape_dot);      // --tape-dot FILE: checked now (UsageError) ...
//   e.run(cfg, ctx);                          // ... the first graph recorded is kept ...
//   out.finish(&ctx);                         // ... and written: FILE, FILE's .svg, the report
//
// The picture needs Graphviz's `dot` program (Debian package graphviz). Without it the dot text
// is still written, and the report says how to get the picture.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "autograd/tape.h"
#include "autograd/tape_dot.h"

namespace attn::experiments {

class RunContext;

// The tape's listing (Tape::to_string) and its picture as the report figure `stem`.
void show_tape(RunContext& ctx, const Tape& tape, const std::string& stem = "tape");

class TapeDotOutput {
 public:
  // Empty file: does nothing. Otherwise throws UsageError unless FILE's folder exists and FILE
  // is not an .svg (the picture goes next to it, with that extension).
  explicit TapeDotOutput(const std::filesystem::path& file);
  // Writes FILE (the first graph recorded since construction), and FILE with extension .svg
  // when dot is installed; with a run context, also puts the picture in the report.
  void finish(RunContext* ctx);

 private:
  std::filesystem::path file_;
  std::optional<TapeDotCapture> capture_;
};

}  // namespace attn::experiments
