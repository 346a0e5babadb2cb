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
// libgomp reads its environment once, when it is loaded, before main runs, so the only way to
// set it from inside the program is to set the variable and start again.
// Nothing is changed when the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT, when ATTN_OPENMP_SPIN=1
// asks for libgomp's default, or when a debugger is attached (an exec would surprise gdb).
#pragma once

namespace attn::experiments {

// Sets GOMP_SPINCOUNT=1000 and re-executes /proc/self/exe with the same arguments when needed;
// returns normally when nothing needs doing or the exec fails.
void bound_openmp_spin(char** argv);

// True when the OpenMP wait is bounded (by us or by the user's environment).
bool openmp_spin_bounded();

}  // namespace attn::experiments
