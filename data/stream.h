// An endless, seeded stream of training examples whose position can be saved and restored,
// and a fixed held-out set.
//
//   attn::data::ExampleStream train(task, /*seed=*/1);
//   auto batch = train.next(32);                  // 32 examples
//   std::string pos = train.position();           // into a checkpoint ...
//   train.set_position(pos);                      // ... and back: the same examples follow
//   auto heldout = attn::data::make_heldout(*heldout_task, 500, /*seed=*/2);
//
// The stream owns its Generator, so nothing else can consume its random numbers: the i-th
// example depends only on the seed and i. The position string is
// "attnlab-stream v1 <examples drawn> <generator state>".
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "data/task.h"

namespace attn::data {

class ExampleStream {
 public:
  ExampleStream(std::shared_ptr<const Task> task, uint64_t seed);

  Example next();
  std::vector<Example> next(int64_t n);

  int64_t count() const { return count_; }  // examples drawn so far
  std::string position() const;
  // Throws attn::Error (the stream is unchanged) for a malformed position string.
  void set_position(const std::string& position);
  const Task& task() const { return *task_; }

 private:
  std::shared_ptr<const Task> task_;
  Generator gen_;
  int64_t count_ = 0;
};

// n examples drawn from a fresh Generator(seed): the same set every time. Use a seed (and,
// when testing generalisation, a task config) different from the training stream's.
std::vector<Example> make_heldout(const Task& task, int64_t n, uint64_t seed);

}  // namespace attn::data
