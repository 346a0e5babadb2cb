// Session: chooses the process's communicator from how it was started (see communicator.h).
#include <fmt/format.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "autograd/error.h"
#include "train/distributed/communicator.h"
#include "train/distributed/init_timeout.h"

namespace attn::train::distributed {

namespace {

Communicator* g_world = nullptr;  // the open Session's communicator
bool g_agreed = false;

int env_int(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return 0;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  return *end == '\0' && n > 0 && n < (1 << 20) ? static_cast<int>(n) : 0;
}

// Under a launcher the other ranks are ended with SIGTERM when one fails: say so on this rank
// (write(2) is safe in a signal handler; stdio is not), then leave with the usual 128 + signal.
char g_term_message[256];
void on_term(int sig) {
  const ssize_t ignored = ::write(STDERR_FILENO, g_term_message, std::strlen(g_term_message));
  (void)ignored;
  ::_exit(128 + sig);
}

}  // namespace

int launcher_world_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"})
    if (const int n = env_int(name)) return n;
  return 0;
}

bool built_with_mpi() {
#ifdef ATTN_HAVE_MPI
  return true;
#else
  return false;
#endif
}

// Seconds from the environment variable NAME, or FALLBACK when it is unset or empty.
static double env_seconds(const char* name, double fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const double s = std::strtod(v, &end);
  if (*end != '\0' || !(s > 0))
    throw UsageError(fmt::format(
        "{}: expected the seconds a rank waits for the others (> 0), got '{}'", name, v));
  return s;
}

double timeout_seconds() {
  return env_seconds("ATTN_DIST_TIMEOUT", 120);
}

double init_timeout_seconds() {
  return env_seconds("ATTN_DIST_INIT_TIMEOUT", timeout_seconds());
}

Session::Session(const std::string& command) {
  const int launched = launcher_world_size();
  if (launched > 0 && built_with_mpi()) {
    comm_ = make_mpi_world(timeout_seconds());  // bad timeouts are refused before MPI starts
    std::snprintf(g_term_message, sizeof g_term_message,
                  "attnlab: rank %d of %d: stopped by the launcher (another rank failed or the "
                  "job was cancelled); files written so far are complete, checkpoints are "
                  "replaced atomically\n",
                  comm_->rank(), comm_->size());
    std::signal(SIGTERM, on_term);
  } else {
    if (launched > 1)
      throw UsageError(fmt::format(
          "{}: started by a launcher as one of {} ranks (mpirun or srun), but this attnlab was "
          "built without MPI, so the ranks cannot work together; install OpenMPI "
          "(scripts/setup --test installs openmpi-bin and libopenmpi-dev) and rebuild, or run "
          "one process without the launcher",
          command, launched));
    if (launched == 1)
      fmt::print(stderr,
                 "{}: note: started by a launcher, but this attnlab was built without MPI; "
                 "running as a single process\n",
                 command);
    comm_ = make_single_process();
  }
  g_world = comm_.get();
  g_agreed = false;
}

Session::~Session() {
  g_world = nullptr;
  comm_.reset();  // the MPI communicator finalises MPI
}

void Session::fail(int code) {
  if (comm_->size() > 1 && !g_agreed) comm_->abort(code);
}

int run_as_rank(const std::string& command, const std::function<int()>& body) {
  Session session(command);
  const Communicator& comm = world();
  try {
    return body();
  } catch (const std::exception& e) {
    if (comm.size() == 1) throw;
    const bool usage = dynamic_cast<const UsageError*>(&e) != nullptr;
    fmt::print(stderr, "attnlab: rank {} of {}: {}{}\n", comm.rank(), comm.size(),
               usage ? "" : "error: ", e.what());
    std::fflush(stderr);
    session.fail(usage ? 2 : 1);
    return usage ? 2 : 1;
  }
}

Communicator& world() {
  static const std::unique_ptr<Communicator> alone = make_single_process();
  return g_world ? *g_world : *alone;
}

void note_agreed_failure() {
  g_agreed = true;
}
bool agreed_failure() {
  return g_agreed;
}

#ifndef ATTN_HAVE_MPI
std::unique_ptr<Communicator> make_mpi_world(double) {
  throw Error("this attnlab was built without MPI");
}
#endif

}  // namespace attn::train::distributed
