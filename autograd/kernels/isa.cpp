// The choice of instruction set (isa.h): the CPU's features, ATTN_ISA, and the table.
#include "autograd/kernels/isa.h"

#include <cstdlib>
#include <mutex>

#include "autograd/error.h"

namespace attn::kernels {

namespace generic {
extern const KernelTable table;
}
#ifdef ATTN_ISA_X86_VARIANTS  // cmake/arch.cmake compiled the x86 copies too
namespace avx2 {
extern const KernelTable table;
}
namespace avx512 {
extern const KernelTable table;
}
#endif

namespace {

// Can this CPU run the instruction set (and has this build a copy for it)? __builtin_cpu_supports
// reads cpuid once (libgcc's
// __cpu_indicator_init) and reports AVX, AVX2 and AVX-512 only when the OS also saves their
// registers on a context switch (XGETBV's XCR0 bits), so a feature the kernel disabled counts
// as absent.
bool cpu_runs(Isa isa) {
#if defined(__x86_64__) && defined(ATTN_ISA_X86_VARIANTS)
  switch (isa) {
    case Isa::generic:
      return true;
    case Isa::avx2:  // x86-64-v3: the copy is compiled for all of it (BMI, F16C, ... too)
      // F16C is not asked: clang 14's builtin does not know the name (the fuzz tree), the
      // kernels convert no half floats, and every CPU with AVX2 has it (it came a generation
      // before AVX2 at both Intel and AMD).
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
    case Isa::avx512:  // x86-64-v4 = v3 + AVX-512 F, BW, CD, DQ, VL
      return cpu_runs(Isa::avx2) && __builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512cd") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  }
  return false;
#else
  return isa == Isa::generic;
#endif
}

const KernelTable& table_of(Isa isa) {
#ifdef ATTN_ISA_X86_VARIANTS
  if (isa == Isa::avx2) return avx2::table;
  if (isa == Isa::avx512) return avx512::table;
#endif
  return generic::table;
}

std::string runnable_names() {
  std::string names;
  for (Isa isa : runnable_isas()) names += std::string(names.empty() ? "" : ", ") + isa_name(isa);
  return names;
}

// ATTN_ISA's choice, or the widest runnable; throws UsageError for a bad ATTN_ISA.
Isa choose() {
  const char* env = std::getenv("ATTN_ISA");
  const std::vector<Isa> runnable = runnable_isas();
  if (!env || !*env) return runnable.back();
  const std::optional<Isa> wanted = parse_isa(env);
  if (!wanted)
    throw UsageError(std::string("ATTN_ISA=") + env +
                     ": expected generic, avx2 or avx512 (this CPU runs " + runnable_names() + ")");
  if (!cpu_runs(*wanted))
    throw UsageError(std::string("ATTN_ISA=") + env + ": this CPU (or this build) cannot run " +
                     env + "; it runs " + runnable_names());
  return *wanted;
}

struct Choice {
  const KernelTable* table = nullptr;
  std::string error;  // a bad ATTN_ISA's message, repeated on every call
};

const Choice& the_choice() {
  static const Choice choice = [] {
    try {
      return Choice{&table_of(choose()), {}};
    } catch (const UsageError& e) {
      return Choice{nullptr, e.what()};
    }
  }();
  return choice;
}

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::avx2:
      return "avx2";
    case Isa::avx512:
      return "avx512";
    default:
      return "generic";
  }
}

std::optional<Isa> parse_isa(const std::string& text) {
  for (Isa isa : {Isa::generic, Isa::avx2, Isa::avx512})
    if (text == isa_name(isa)) return isa;
  return std::nullopt;
}

std::vector<Isa> runnable_isas() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::generic, Isa::avx2, Isa::avx512})
    if (cpu_runs(isa)) out.push_back(isa);
  return out;
}

const KernelTable& active_kernels() {
  const Choice& c = the_choice();
  if (!c.table) throw UsageError(c.error);
  return *c.table;
}

Isa active_isa() {
  return active_kernels().isa;
}

void check_isa_choice() {
  active_kernels();
}

const KernelTable& kernels_for(Isa isa) {
  for (Isa runnable : runnable_isas())
    if (runnable == isa) return table_of(isa);
  throw Error(std::string("kernels_for: no ") + isa_name(isa) + " kernels here (this CPU runs " +
              runnable_names() + ")");
}

}  // namespace attn::kernels
