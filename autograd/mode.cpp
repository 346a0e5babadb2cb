#include "autograd/mode.h"

#include <atomic>
#include <cstdlib>
#include <string>

#include "autograd/error.h"

namespace attn {

namespace {

bool build_default() {
#ifdef NDEBUG
  return false;  // Release: the fast path
#else
  return true;  // Debug: the path a student steps through
#endif
}

// The build's default unless ATTN_REFERENCE says otherwise.
bool initial_mode() {
  const char* env = std::getenv("ATTN_REFERENCE");
  if (!env || !*env) return build_default();
  const std::string v = env;
  if (v == "1" || v == "true" || v == "on") return true;
  if (v == "0" || v == "false" || v == "off") return false;
  throw Error("ATTN_REFERENCE must be 1 (reference path) or 0 (fast path), got '" + v + "'");
}

std::atomic<bool>& mode() {
  static std::atomic<bool> on{initial_mode()};
  return on;
}

}  // namespace

bool reference_mode() {
  return mode().load(std::memory_order_relaxed);
}

void set_reference_mode(bool on) {
  mode().store(on, std::memory_order_relaxed);
}

bool reference_mode_from_env() {
  const char* env = std::getenv("ATTN_REFERENCE");
  return env && *env;
}

const char* path_name() {
  return reference_mode() ? "reference" : "fast";
}

ReferenceModeScope::ReferenceModeScope(bool on) : previous_(reference_mode()) {
  set_reference_mode(on);
}

ReferenceModeScope::~ReferenceModeScope() {
  set_reference_mode(previous_);
}

}  // namespace attn
