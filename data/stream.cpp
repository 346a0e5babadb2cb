#include "data/stream.h"

#include <fmt/format.h>

#include <sstream>

#include "autograd/error.h"

namespace attn::data {

namespace {
constexpr const char* kMagic = "attnlab-stream";
constexpr const char* kVersion = "v1";
}  // namespace

ExampleStream::ExampleStream(std::shared_ptr<const Task> task, uint64_t seed)
    : task_(std::move(task)), gen_(seed) {
  if (!task_) throw Error("ExampleStream: task is null");
}

Example ExampleStream::next() {
  ++count_;
  return task_->sample(gen_);
}

std::vector<Example> ExampleStream::next(int64_t n) {
  if (n <= 0) throw Error(fmt::format("ExampleStream::next: n must be > 0, got {}", n));
  std::vector<Example> out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out.push_back(next());
  return out;
}

std::string ExampleStream::position() const {
  return fmt::format("{} {} {} {}", kMagic, kVersion, count_, gen_.state());
}

void ExampleStream::set_position(const std::string& position) {
  std::istringstream in(position);
  std::string magic, version;
  int64_t count = -1;
  in >> magic >> version >> count;
  if (!in || magic != kMagic || version != kVersion || count < 0)
    throw Error(
        fmt::format("ExampleStream: '{}' is not a saved stream position", position.substr(0, 60)));
  std::string state;
  std::getline(in >> std::ws, state);
  Generator gen;
  gen.set_state(state);  // throws on a malformed state before we change anything
  gen_ = gen;
  count_ = count;
}

std::vector<Example> make_heldout(const Task& task, int64_t n, uint64_t seed) {
  if (n <= 0) throw Error(fmt::format("make_heldout({}): n must be > 0, got {}", task.name(), n));
  Generator gen(seed);
  std::vector<Example> out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out.push_back(task.sample(gen));
  return out;
}

}  // namespace attn::data
