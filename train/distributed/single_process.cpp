// The communicator of a process that runs alone: rank 0 of 1. Sums are the values themselves,
// and nothing waits or aborts anything but this process; a ring shift hands the values back
// to this rank (its own neighbour).
#include <cstdlib>

#include "train/distributed/communicator.h"

namespace attn::train::distributed {

namespace {

class SingleProcess final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string describe() const override { return "single process"; }
  void sum_in_rank_order(std::span<float>, const std::string&) override {}
  void sum_in_rank_order(std::span<double>, const std::string&) override {}
  std::vector<std::string> all_gather(const std::string& text, const std::string&) override {
    return {text};
  }
  [[noreturn]] void abort(int code) override { std::exit(code); }

 protected:
  // Never called: ring_shift copies a ring of one itself (see ring_shift.cpp).
  void shift_to_next(std::span<const float>, std::span<float>, const std::string&) override {}
};

}  // namespace

std::unique_ptr<Communicator> make_single_process() {
  return std::make_unique<SingleProcess>();
}

}  // namespace attn::train::distributed
