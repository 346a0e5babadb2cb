// Communicator::ring_shift: the checks and the byte count every transport shares; the move
// itself is each communicator's shift_to_next (MPI: a nonblocking send and receive pair).
#include <fmt/format.h>

#include <algorithm>

#include "autograd/error.h"
#include "train/distributed/communicator.h"

namespace attn::train::distributed {

void Communicator::ring_shift(std::span<const float> send,
                              std::span<float> recv,
                              const std::string& what) {
  if (send.size() != recv.size())
    throw Error(fmt::format("ring_shift during {}: {} values to send but room for {} to receive",
                            what, send.size(), recv.size()));
  const float* recv_end = recv.data() + recv.size();
  const float* send_end = send.data() + send.size();
  if (!send.empty() && send.data() < recv_end && recv.data() < send_end)
    throw Error(fmt::format("ring_shift during {}: the send and receive buffers overlap", what));
  if (size() == 1) {  // a ring of one: this rank is its own neighbour on both sides
    std::copy(send.begin(), send.end(), recv.begin());
    return;
  }
  shift_to_next(send, recv, what);
  ring_bytes_sent_ += send.size_bytes();
}

}  // namespace attn::train::distributed
