// The MPI communicator: MPI_COMM_WORLD with errors returned (not fatal), nonblocking
// collectives polled against a deadline, and sums in a fixed rank order.
//
// The ordered sum of one bucket of n values over N ranks, in two moves of data and one loop:
//   1. MPI_Ialltoallv: the bucket is cut into N chunks; rank c receives chunk c from every rank
//      (N rows, one per rank, in rank order);
//   2. rank c adds its rows in rank order, ((x0 + x1) + x2) + ..., into its own chunk;
//   3. MPI_Iallgatherv: every rank receives every finished chunk.
// Each value crosses the network twice, as in a ring all-reduce, but only copies are made by MPI:
// every addition happens in step 2 in an order fixed by the ranks alone.
#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <thread>

#include "autograd/error.h"
#include "train/distributed/communicator.h"
#include "train/distributed/init_timeout.h"

namespace attn::train::distributed {

namespace {

// Values per bucket: 4 MB of floats. Scratch memory is one bucket; a bucket this size costs
// far more to move than the two calls' fixed cost (see docs/distributed.md).
constexpr size_t kBucket = size_t{1} << 20;

template <class T>
MPI_Datatype mpi_type();
template <>
MPI_Datatype mpi_type<float>() {
  return MPI_FLOAT;
}
template <>
MPI_Datatype mpi_type<double>() {
  return MPI_DOUBLE;
}

// MPI_Init meets every rank of the job; if one never starts, it would wait forever. This
// watchdog ends the process with a message when MPI_Init has not returned within the timeout.
class InitWatchdog {
 public:
  explicit InitWatchdog(double seconds)
      : thread_([this, seconds] {
          std::unique_lock<std::mutex> lock(mutex_);
          if (done_.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return ready_; }))
            return;
          const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
          if (!rank) rank = std::getenv("PMI_RANK");
          if (!rank) rank = std::getenv("SLURM_PROCID");
          std::fprintf(stderr,
                       "attnlab: rank %s: error: MPI_Init did not finish within %.0f s: a rank of "
                       "the job has not started or has died (set ATTN_DIST_INIT_TIMEOUT or "
                       "ATTN_DIST_TIMEOUT to wait longer)\n",
                       rank ? rank : "?", seconds);
          std::fflush(stderr);
          std::_Exit(1);
        }) {}
  ~InitWatchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ready_ = true;
    }
    done_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable done_;
  bool ready_ = false;
  std::thread thread_;
};

class MpiWorld final : public Communicator {
 public:
  MpiWorld(double init_timeout, double timeout) : timeout_(timeout) {
    int provided = 0;
    {
      InitWatchdog watchdog(init_timeout);
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    }
    // Errors come back as codes that we turn into attn::Error naming the operation, instead of
    // MPI's default of ending the job with its own message.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    library_ = std::string(version, static_cast<size_t>(len));
    library_ = library_.substr(0, library_.find(','));
  }
  ~MpiWorld() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string describe() const override {
    return fmt::format("MPI ({}), {} ranks", library_, size_);
  }
  void sum_in_rank_order(std::span<float> values, const std::string& what) override {
    ordered_sum(values, what);
  }
  void sum_in_rank_order(std::span<double> values, const std::string& what) override {
    ordered_sum(values, what);
  }

  std::vector<std::string> all_gather(const std::string& text, const std::string& what) override {
    const int mine = static_cast<int>(text.size());
    std::vector<int> lengths(static_cast<size_t>(size_));
    MPI_Request req;
    check(MPI_Iallgather(&mine, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD, &req),
          what);
    wait(req, what);
    std::vector<int> displs(lengths.size());
    int total = 0;
    for (size_t r = 0; r < lengths.size(); ++r) {
      displs[r] = total;
      total += lengths[r];
    }
    std::string all(static_cast<size_t>(total), '\0');
    check(MPI_Iallgatherv(text.data(), mine, MPI_CHAR, all.data(), lengths.data(), displs.data(),
                          MPI_CHAR, MPI_COMM_WORLD, &req),
          what);
    wait(req, what);
    std::vector<std::string> out;
    for (size_t r = 0; r < lengths.size(); ++r)
      out.push_back(all.substr(static_cast<size_t>(displs[r]), static_cast<size_t>(lengths[r])));
    return out;
  }

  // Receive from rank - 1 and send to rank + 1 at once (both nonblocking, so no rank waits for
  // its neighbour to post a receive first), then wait for both against the deadline.
  void shift_to_next(std::span<const float> send,
                     std::span<float> recv,
                     const std::string& what) override {
    if (send.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
      throw Error(
          fmt::format("ring_shift during {}: {} values exceed one MPI message", what, send.size()));
    const int n = static_cast<int>(send.size());
    const int next = (rank_ + 1) % size_, previous = (rank_ + size_ - 1) % size_;
    constexpr int kRingTag = 31;
    MPI_Request reqs[2];
    check(MPI_Irecv(recv.data(), n, MPI_FLOAT, previous, kRingTag, MPI_COMM_WORLD, &reqs[0]), what);
    check(MPI_Isend(send.data(), n, MPI_FLOAT, next, kRingTag, MPI_COMM_WORLD, &reqs[1]), what);
    wait(reqs[0], what);
    wait(reqs[1], what);
  }

  [[noreturn]] void abort(int code) override {
    std::fflush(stdout);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);  // MPI_Abort does not return; in case an implementation does
  }

 private:
  void check(int rc, const std::string& what) const {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    throw Error(
        fmt::format("MPI failed during {}: {}", what, std::string(text, static_cast<size_t>(len))));
  }

  // Polls the request until it completes or the deadline passes. Spinning keeps a collective
  // between ranks on idle cores fast; yielding lets oversubscribed ranks share a core.
  void wait(MPI_Request& req, const std::string& what) const {
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_);
    for (int64_t polls = 0;; ++polls) {
      int done = 0;
      check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), what);
      if (done) return;
      if (polls > 10000)
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      else
        std::this_thread::yield();
      if ((polls & 63) == 0 && Clock::now() > deadline)
        throw Error(fmt::format(
            "no answer from the other ranks for {:.0f} s during {}: a rank has died, hangs, or "
            "was never started (set ATTN_DIST_TIMEOUT to wait longer)",
            timeout_, what));
    }
  }

  template <class T>
  void ordered_sum(std::span<T> values, const std::string& what) {
    const auto n = static_cast<size_t>(size_);
    const auto me = static_cast<size_t>(rank_);
    if (n == 1) return;
    std::vector<int> counts(n), displs(n), row_counts(n), row_displs(n);
    std::vector<T> rows;
    for (size_t begin = 0; begin < values.size(); begin += kBucket) {
      const size_t len = std::min(kBucket, values.size() - begin);
      T* bucket = values.data() + begin;
      for (size_t c = 0; c < n; ++c) {  // chunk c = [c len / n, (c + 1) len / n)
        displs[c] = static_cast<int>(c * len / n);
        counts[c] = static_cast<int>((c + 1) * len / n) - displs[c];
      }
      const int mine = counts[me];
      for (size_t s = 0; s < n; ++s) {
        row_counts[s] = mine;
        row_displs[s] = static_cast<int>(s) * mine;
      }
      rows.resize(n * static_cast<size_t>(mine));
      MPI_Request req;
      check(
          MPI_Ialltoallv(bucket, counts.data(), displs.data(), mpi_type<T>(), rows.data(),
                         row_counts.data(), row_displs.data(), mpi_type<T>(), MPI_COMM_WORLD, &req),
          what);
      wait(req, what);
      T* out = bucket + displs[me];
      std::copy(rows.begin(), rows.begin() + mine, out);
      for (size_t s = 1; s < n; ++s) {
        const T* row = rows.data() + s * static_cast<size_t>(mine);
        for (int i = 0; i < mine; ++i) out[i] += row[i];
      }
      check(MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, bucket, counts.data(),
                            displs.data(), mpi_type<T>(), MPI_COMM_WORLD, &req),
            what);
      wait(req, what);
    }
  }

  double timeout_;
  int rank_ = 0, size_ = 1;
  std::string library_;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_world(double timeout) {
  return std::make_unique<MpiWorld>(init_timeout_seconds(), timeout);
}

}  // namespace attn::train::distributed
