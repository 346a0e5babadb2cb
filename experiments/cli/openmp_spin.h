// Bounds how long attnlab's idle OpenMP workers spin before they sleep.
//
//   int main(int argc, char** argv) {
//     attn::experiments::bound_openmp_spin(argv);  // first line of main
//
// At the end of every parallel region libgomp's idle workers spin, by default for a long time,
// waiting for the next region. On idle cores that is what makes 2 threads pay; on a machine whose
// cores are also busy with other work the spinning workers take the cores from the thread that
// has the work. Measured (150 reversal training steps, 2 threads; docs/performance.md, "Threads"):
// idle 5.3-5.7 s with the default, 5.7 s with GOMP_SPINCOUNT=1000, 6.5 s with passive waiting;
// with two other busy processes 123-154 s with the default, 5.5-17 s with GOMP_SPINCOUNT=1000.
// But a worker that sleeps after 1000 spins is woken by a futex call for almost every region, and
// the chapter experiments' small models run a region every few microseconds: in this VM the
// wake-ups took 25-37% of their samples (kernel irq handling). 100000 spins (about a tenth of a
// millisecond) keeps the bound and catches the next region: depth-hops --quick at 2 threads 3.07
// -> 1.71 s idle and 9.25 -> 4.06 s beside two busy processes; titans-memory 4.52 -> 2.29 s
// (docs/performance.md, "The catalogue before and after").
// libgomp reads its environment once, when it is loaded, before main runs, so the only way to
// set it from inside the program is to set the variable and start again.
// Nothing is changed when the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT, when ATTN_OPENMP_SPIN=1
// asks for libgomp's default, or when a debugger is attached (an exec would surprise gdb).
#pragma once

namespace attn::experiments {

// The spin bound attnlab sets (GOMP_SPINCOUNT's value).
inline constexpr const char* kBoundedSpinCount = "100000";

// Sets GOMP_SPINCOUNT=kBoundedSpinCount and re-executes /proc/self/exe with the same arguments when
// needed; returns normally when nothing needs doing or the exec fails.
void bound_openmp_spin(char** argv);

// True when the OpenMP wait is bounded (by us or by the user's environment).
bool openmp_spin_bounded();

}  // namespace attn::experiments
