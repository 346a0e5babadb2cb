// Checkpoints: everything needed to continue a run exactly where it stopped, in one
// safetensors file written atomically.
//
//   attn::train::TrainingState st{.model = &model, .optimizer = &opt,
//                                 .generators = {{"dropout", &dropout_gen}}, .stream = &stream};
//   attn::train::save_checkpoint("run/ckpt.safetensors", st, step, {{"task", "reversal"}});
//   ...
//   attn::train::CheckpointInfo info = attn::train::load_checkpoint("run/ckpt.safetensors", st);
//   trainer.run(info.step);    // continues bit-identically (same thread count)
//
// File contents: tensors "model.<name>" (weights and buffers) and "optim.<name>" (optimizer
// state), in the precision of attn::real (F32, or F64 in the double build) so a reload is
// exact; metadata "attnlab.checkpoint" (format version), "step", "optim.type", "rng.<name>"
// (Generator::state()), "data.position" (ExampleStream::position()), "extra.<key>" (yours),
// and "checksum" (FNV-1a 64 over every name, shape, value and metadata entry).
//
// Writing goes to <path>.tmp.<pid>.<n>, fsync, rename: a crash mid-write leaves the previous
// checkpoint intact. Loading checks the file (format, checksum, truncation), then every model
// tensor name and shape, the optimizer state, each generator state and the stream position, and
// only when all of them are valid changes anything; otherwise it throws an attn::Error that names
// the file and lists the problems.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "autograd/generator.h"
#include "autograd/safetensors.h"
#include "data/stream.h"
#include "nn/module.h"
#include "train/optim/optimizer.h"

namespace attn::train {

// What a checkpoint saves and restores; null / empty members are skipped.
struct TrainingState {
  nn::Module* model = nullptr;
  Optimizer* optimizer = nullptr;
  std::map<std::string, Generator*> generators;
  data::ExampleStream* stream = nullptr;
};

struct CheckpointInfo {
  int64_t step = 0;
  Metadata extra;  // the extra metadata given to save_checkpoint (without the "extra." prefix)
};

void save_checkpoint(const std::string& path,
                     const TrainingState& state,
                     int64_t step,
                     const Metadata& extra = {});
// The bytes save_checkpoint writes (save_checkpoint = write_file_atomically(path, these)).
std::string encode_checkpoint(const TrainingState& state, int64_t step, const Metadata& extra = {});

// Validates everything, then restores it into `state`. Throws attn::Error before changing
// anything when the file is unreadable, truncated, corrupted, or does not match.
CheckpointInfo load_checkpoint(const std::string& path, TrainingState& state);

// Reads and verifies a checkpoint file on its own (format and checksum).
SafetensorsFile read_checkpoint_file(const std::string& path);

}  // namespace attn::train
