// Communicator: what data-parallel training and ring attention need from the ranks of a job.
// Nothing outside train/distributed/ includes mpi.h; a build without MPI compiles only the
// single-process communicator.
//
//   attn::train::distributed::Session session("attnlab train");  // MPI_Init only when launched
//                                                                  // by mpirun or srun
//   Communicator& comm = attn::train::distributed::world();       // this process's ranks
//   comm.rank(); comm.size();                                      // 0..size-1, 1 when alone
//   comm.sum_in_rank_order(gradients, "gradients");                // the same bits on every rank
//   auto texts = comm.all_gather(my_status, "start-up check");     // every rank's text
//   comm.ring_shift(mine, from_previous, "key/value block 2");     // to rank+1, from rank-1
//
// Sums are in a fixed order: element i becomes ((x0[i] + x1[i]) + x2[i]) + ... with xr the
// value on rank r, computed once and copied to every rank. MPI_Allreduce leaves the order (and
// the bracketing) to the implementation, which may change with the message size or the
// network, so a repeated run could round differently; this order makes N ranks run twice give
// the same bits, and every rank hold exactly the same sum.
//
// Every collective waits at most timeout_seconds() (ATTN_DIST_TIMEOUT, default 120) for the
// other ranks, then throws an attn::Error naming the operation: a rank that died or hangs never
// leaves the others waiting forever.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace attn::train::distributed {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // "single process" or e.g. "MPI (Open MPI v4.1.4), 2 ranks".
  virtual std::string describe() const = 0;
  // values[i] = sum over the ranks of their values[i], in rank order (see above). `what` names
  // the call in error messages ("gradients at step 12").
  virtual void sum_in_rank_order(std::span<float> values, const std::string& what) = 0;
  virtual void sum_in_rank_order(std::span<double> values, const std::string& what) = 0;
  // Every rank's text, indexed by rank.
  virtual std::vector<std::string> all_gather(const std::string& text, const std::string& what) = 0;
  // Ends every rank of the job now with this exit code (after a failure only this rank saw).
  [[noreturn]] virtual void abort(int code) = 0;

  // One step round the ring (ring attention's move): sends `send` to rank (rank + 1) % size and
  // receives the same number of values from rank (rank - 1 + size) % size into `recv` (which
  // must not overlap `send`). A ring of one hands the values to itself: recv becomes a copy of
  // send and nothing crosses a process boundary. Every rank calls it together; sizes must match.
  void ring_shift(std::span<const float> send, std::span<float> recv, const std::string& what);
  // Bytes this rank has sent to another rank through ring_shift since it started (0 alone).
  uint64_t ring_bytes_sent() const { return ring_bytes_sent_; }

 protected:
  // The transport of ring_shift (sizes already checked, size() > 1).
  virtual void shift_to_next(std::span<const float> send,
                             std::span<float> recv,
                             const std::string& what) = 0;

 private:
  uint64_t ring_bytes_sent_ = 0;
};

// The launcher's world size when this process was started by mpirun (OMPI_COMM_WORLD_SIZE),
// another PMI launcher (PMI_SIZE) or Slurm's srun (SLURM_STEP_NUM_TASKS; not SLURM_NTASKS,
// which a batch script sees before srun starts anything); 0 when started on its own.
int launcher_world_size();
// True when this binary was built with MPI (CMake found it).
bool built_with_mpi();
// Seconds a collective waits for the other ranks: ATTN_DIST_TIMEOUT, default 120.
double timeout_seconds();

// The process's communicator for its lifetime. Started on its own (no launcher variables), it
// is the single-process communicator and MPI is never initialised: a plain run is unchanged.
// Under a launcher it initialises MPI; a build without MPI refuses (attn::UsageError) a world of
// more than one rank, saying so, and runs a world of one alone with a note on stderr.
class Session {
 public:
  explicit Session(const std::string& command);
  ~Session();  // MPI_Finalize when MPI was started
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  // After an error escaped the command: when every rank knows of it (agreed_failure()), the
  // ranks finish together; otherwise this rank ends the whole job (Communicator::abort).
  void fail(int code);

 private:
  std::unique_ptr<Communicator> comm_;
};

// Runs a command's body inside a Session. Alone, exceptions pass through unchanged. As one rank
// of several, an exception is printed here with the rank ("attnlab: rank 1 of 2: ..."); an error
// every rank saw (agreed_failure) ends the ranks together with its exit code (2 for
// attn::UsageError, else 1), one only this rank saw ends the whole job (the others would wait).
int run_as_rank(const std::string& command, const std::function<int()>& body);

// The communicator of the current Session, or the single-process one when none is open.
Communicator& world();

// Marks the error being thrown as known to every rank (all_or_none raised it on all of them),
// so Session::fail lets the ranks end normally instead of aborting the job.
void note_agreed_failure();
bool agreed_failure();

// Implementations (single_process.cpp, mpi_communicator.cpp).
std::unique_ptr<Communicator> make_single_process();
// Initialises MPI (threads: funneled); collectives wait at most timeout seconds. Only in builds
// with MPI (attn_mpi).
std::unique_ptr<Communicator> make_mpi_world(double timeout);

}  // namespace attn::train::distributed
