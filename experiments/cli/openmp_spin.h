// Bounds how long attnlab's idle OpenMP workers spin before they sleep.
//
//   int main(int argc, char** argv) {
//     attn::experiments::remember_command_line(argv);  // first line of main
//     ...
//   // in a command, once its options are checked and before it computes anything:
//     attn::experiments::bound_openmp_spin();  // may start the process again, same arguments
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
//
// libgomp reads its environment once, when it is loaded, before main runs, so the only way to
// set it from inside the program is to set the variable and start again (an exec). Setting it
// earlier does not work: a function in the executable's .preinit_array runs before libgomp's
// constructor, but glibc then resets `environ` to the original array, dropping the variable.
// The exec costs a second start-up (about 11 ms of CPU here), so it happens only when a command
// is about to compute: `--help`, `list`, `--version` and every refused option start once
// (tests/cli/bad_inputs.sh runs a few thousand such commands). Under mpirun or srun the exec
// happens first thing in main, before MPI_Init (a rank must not start again once it has joined).
// What runs before the second start runs twice: reading the options and loading --plugin
// libraries (each plugin's rows are checked in both processes; a plugin that prints while it
// loads prints twice).
// Nothing is changed when the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT, when ATTN_OPENMP_SPIN=1
// asks for libgomp's default, or when a debugger is attached (an exec would surprise gdb).
#pragma once

namespace attn::experiments {

// The spin bound attnlab sets (GOMP_SPINCOUNT's value).
inline constexpr const char* kBoundedSpinCount = "100000";

// Keeps argv for bound_openmp_spin(); under mpirun or srun (a launcher's rank variables are set)
// bounds the spin at once.
void remember_command_line(char** argv);

// Sets GOMP_SPINCOUNT=kBoundedSpinCount and re-executes /proc/self/exe with the remembered
// arguments when needed; returns normally when nothing needs doing, when no command line was
// remembered (a test calling a command directly) or when the exec fails. Nothing may have been
// written or printed before the call: the new process does the command from its start.
void bound_openmp_spin();

// True when the OpenMP wait is bounded (by us or by the user's environment).
bool openmp_spin_bounded();

}  // namespace attn::experiments
