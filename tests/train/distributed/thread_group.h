// ThreadGroup: a Communicator whose ranks are threads of one process, for testing the
// data-parallel code without MPI. Collectives meet at a barrier; every rank computes the sum
// from the same rank-ordered slots, so the sums are bit-identical on all ranks (as the MPI
// communicator's are).
//
//   ThreadGroup group(3);
//   group.run([&](Communicator& comm) { ... comm.rank() ... });  // one thread per rank
#pragma once

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "autograd/error.h"
#include "train/distributed/communicator.h"

namespace attn::train::distributed::testing {

class ThreadGroup {
 public:
  explicit ThreadGroup(int size) : size_(size), floats_(size), doubles_(size), texts_(size) {}

  // Runs body on `size` threads, rank r on the r-th; rethrows the first rank's exception.
  void run(const std::function<void(Communicator&)>& body) {
    std::vector<std::exception_ptr> errors(static_cast<size_t>(size_));
    std::vector<std::thread> threads;
    for (int r = 0; r < size_; ++r)
      threads.emplace_back([&, r] {
        Rank comm(*this, r);
        try {
          body(comm);
        } catch (...) {
          errors[static_cast<size_t>(r)] = std::current_exception();
        }
      });
    for (auto& t : threads) t.join();
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
  }

 private:
  class Rank final : public Communicator {
   public:
    Rank(ThreadGroup& g, int rank) : g_(g), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return g_.size_; }
    std::string describe() const override { return "thread group"; }
    void sum_in_rank_order(std::span<float> v, const std::string&) override {
      g_.sum(g_.floats_, rank_, v);
    }
    void sum_in_rank_order(std::span<double> v, const std::string&) override {
      g_.sum(g_.doubles_, rank_, v);
    }
    std::vector<std::string> all_gather(const std::string& text, const std::string&) override {
      g_.texts_[static_cast<size_t>(rank_)] = text;
      g_.barrier();
      std::vector<std::string> out = g_.texts_;
      g_.barrier();
      return out;
    }
    [[noreturn]] void abort(int) override { throw Error("ThreadGroup: abort"); }

   protected:
    // Every rank posts its values in its slot; rank r then reads rank r - 1's.
    void shift_to_next(std::span<const float> send,
                       std::span<float> recv,
                       const std::string&) override {
      g_.floats_[static_cast<size_t>(rank_)].assign(send.begin(), send.end());
      g_.barrier();
      const auto& from = g_.floats_[static_cast<size_t>((rank_ + g_.size_ - 1) % g_.size_)];
      std::copy(from.begin(), from.end(), recv.begin());
      g_.barrier();
    }

   private:
    ThreadGroup& g_;
    int rank_;
  };

  template <class T>
  void sum(std::vector<std::vector<T>>& slots, int rank, std::span<T> v) {
    slots[static_cast<size_t>(rank)].assign(v.begin(), v.end());
    barrier();
    for (size_t i = 0; i < v.size(); ++i) {
      T acc = slots[0][i];
      for (int r = 1; r < size_; ++r) acc += slots[static_cast<size_t>(r)][i];
      v[i] = acc;
    }
    barrier();  // nobody refills a slot before every rank has read it
  }

  void barrier() {
    std::unique_lock<std::mutex> lock(mutex_);
    const int gen = generation_;
    if (++arrived_ == size_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return generation_ != gen; });
    }
  }

  int size_;
  std::vector<std::vector<float>> floats_;
  std::vector<std::vector<double>> doubles_;
  std::vector<std::string> texts_;
  std::mutex mutex_;
  std::condition_variable cv_;
  int arrived_ = 0, generation_ = 0;
};

}  // namespace attn::train::distributed::testing
