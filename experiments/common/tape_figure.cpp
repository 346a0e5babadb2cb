#include "experiments/common/tape_figure.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "experiments/kit/kit.h"

extern char** environ;

namespace attn::experiments {

namespace {

// dot's layout time grows much faster than the graph: 100 records of an LSTM's training step
// took 5 s here and 200 took 26 s (a whole step, 714 records, minutes). Such a picture is
// unreadable anyway; the teaching experiments' tapes have a dozen records.
constexpr size_t kMaxDrawnRecords = 120;

void write_file(const std::filesystem::path& path, const std::string& text) {
  // Written under a temporary name, then renamed: a failed write leaves no half file.
  const std::filesystem::path tmp = path.string() + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary);
    f << text;
    if (!f.flush()) throw Error("--tape-dot: cannot write " + tmp.string());
  }
  std::filesystem::rename(tmp, path);
}

// A fresh empty file under the temporary folder (removed by the caller).
std::filesystem::path temp_file(const char* suffix) {
  std::string name =
      (std::filesystem::temp_directory_path() / "attnlab-tape-XXXXXX").string() + suffix;
  const int fd = mkstemps(name.data(), static_cast<int>(std::string(suffix).size()));
  if (fd < 0) throw Error("tape picture: cannot create a temporary file in " + name);
  close(fd);
  return name;
}

std::string drawing_note(size_t records) {
  return fmt::format(
      "{} records are too many to draw as one picture (the limit is {}); the dot file has them "
      "all (dot -Tsvg FILE > tape.svg).",
      records, kMaxDrawnRecords);
}

}  // namespace

std::optional<std::string> render_dot_svg(const std::string& dot) {
  const std::filesystem::path in = temp_file(".dot"), out = temp_file(".svg");
  write_file(in, dot);
  std::vector<std::string> words{"dot", "-Tsvg", in.string(), "-o", out.string()};
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  int status = -1;
  const bool ran = posix_spawnp(&pid, "dot", nullptr, nullptr, argv.data(), environ) == 0 &&
                   waitpid(pid, &status, 0) == pid;
  std::optional<std::string> svg;
  if (ran && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    std::ifstream f(out, std::ios::binary);
    std::stringstream text;
    text << f.rdbuf();
    const std::string s = text.str();
    if (const size_t start = s.find("<svg"); start != std::string::npos) svg = s.substr(start);
  }
  std::error_code ignored;
  std::filesystem::remove(in, ignored);
  std::filesystem::remove(out, ignored);
  return svg;
}

void show_tape(RunContext& ctx, const Tape& tape, const std::string& stem) {
  offer_graph(tape);  // the caller may clear it without a backward: --tape-dot sees it here
  ctx.preformatted(tape.to_string());
  if (tape.size() > kMaxDrawnRecords) {
    ctx.note(drawing_note(tape.size()));
    return;
  }
  if (auto svg = render_dot_svg(tape_dot(tape)))
    ctx.figure(stem, *svg,
               "The tape as a graph: boxes are records (op, then the struct to break on), "
               "ellipses are leaves (blue: learned), arrows carry a value and its shape (dashed: "
               "no gradient flows back along it)");
  else
    ctx.note("Install Graphviz (apt-get install graphviz) to see this tape as a picture.");
}

TapeDotOutput::TapeDotOutput(const std::filesystem::path& file) : file_(file) {
  if (file_.empty()) return;
  if (file_.extension() == ".svg")
    throw UsageError("--tape-dot " + file_.string() +
                     ": this file gets the dot text and the picture goes beside it as .svg; "
                     "name it e.g. tape.dot");
  const std::filesystem::path dir = file_.parent_path();
  if (!dir.empty() && !std::filesystem::is_directory(dir))
    throw UsageError("--tape-dot " + file_.string() + ": folder " + dir.string() +
                     " does not exist");
  capture_.emplace();
}

void TapeDotOutput::finish(RunContext* ctx) {
  if (!capture_) return;
  const size_t records = capture_->records();
  const std::string dot = records > 0 ? capture_->dot() : tape_dot(Tape());
  capture_.reset();  // stop watching the tape
  write_file(file_, dot);
  fmt::print("tape graph ({} records): {}\n", records, file_.string());
  if (records == 0) fmt::print(stderr, "--tape-dot: nothing was recorded on the tape\n");
  if (records > kMaxDrawnRecords) {
    fmt::print("tape picture: not drawn. {}\n", drawing_note(records));
    if (ctx) ctx->note(drawing_note(records));
    return;
  }
  const std::optional<std::string> svg = render_dot_svg(dot);
  if (!svg) {
    fmt::print(stderr,
               "--tape-dot: no picture (install Graphviz's dot: apt-get install graphviz)\n");
    return;
  }
  std::filesystem::path svg_file = file_;
  write_file(svg_file.replace_extension(".svg"), *svg);
  fmt::print("tape picture: {}\n", svg_file.string());
  if (ctx)
    ctx->figure("tape-dot", *svg,
                fmt::format("--tape-dot: the first graph recorded ({} records)", records));
}

}  // namespace attn::experiments
