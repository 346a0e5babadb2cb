// libFuzzer harness: load_checkpoint of arbitrary bytes into a small training state (a Linear
// layer, Adam, a generator and a reversal example stream), as `attnlab train --resume` does.
//
//   scripts/fuzz checkpoint 600
//   ATTN_FUZZ_SEED_OUT=seed.safetensors build/fuzz/fuzz_checkpoint -runs=0   # a valid seed
//
// The contract checked: the file either loads or throws attn::Error; a load that succeeds has
// put exactly the file's weights into the model. Each input gets a fresh state and its own
// file (the loader reads paths), so inputs do not influence each other.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>

#include "autograd/error.h"
#include "autograd/generator.h"
#include "data/stream.h"
#include "data/tasks/sequence.h"
#include "nn/linear.h"
#include "train/checkpoint.h"
#include "train/optim/adam.h"

namespace {

// Everything a checkpoint restores, freshly initialised from fixed seeds.
struct State {
  attn::Generator init{3};
  attn::nn::Linear model{3, 2, true, init};
  attn::train::Adam optim{model.parameters(), {}};
  attn::Generator dropout{5};
  attn::data::ExampleStream stream{
      std::make_shared<attn::data::SequenceTask>(attn::data::SequenceTask::Config{
          .op = attn::data::SequenceOp::kReverse, .min_len = 1, .max_len = 4}),
      7};
  attn::train::TrainingState view() {
    return {.model = &model,
            .optimizer = &optim,
            .generators = {{"dropout", &dropout}},
            .stream = &stream};
  }
};

const std::string& temp_path() {
  static const std::string path =
      "/tmp/attn_fuzz_checkpoint_" + std::to_string(::getpid()) + ".safetensors";
  return path;
}

void write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::atexit([] { ::unlink(temp_path().c_str()); });
  if (const char* out = std::getenv("ATTN_FUZZ_SEED_OUT")) {
    State s;
    s.stream.next(3);  // a position other than the start
    write(out, attn::train::encode_checkpoint(s.view(), 12, {{"task", "reversal"}}));
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = temp_path();
  write(path, std::string(reinterpret_cast<const char*>(data), size));
  State s;
  attn::train::TrainingState st = s.view();
  try {
    attn::train::load_checkpoint(path, st);
  } catch (const attn::Error&) {
    return 0;
  }
  // Loaded: the model must now hold the file's "model.*" tensors, bit for bit.
  const attn::SafetensorsFile f = attn::train::read_checkpoint_file(path);
  for (const auto& [name, t] : s.model.state_dict()) {
    const attn::Tensor& saved = f.tensors.at("model." + name);
    if (saved.shape() != t.shape() ||
        std::memcmp(saved.data(), t.data(), static_cast<size_t>(t.numel()) * sizeof(attn::real))) {
      std::fprintf(stderr, "fuzz_checkpoint: loaded '%s' differs from the file\n", name.c_str());
      std::abort();
    }
  }
  return 0;
}
