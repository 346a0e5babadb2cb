// Reading and writing tensors in the safetensors format (the format PyTorch users share).
//
//   attn::TensorMap m{{"weight", w}, {"bias", b}};
//   attn::save_safetensors("layer.safetensors", m, {{"step", "10"}});   // atomic
//   attn::SafetensorsFile f = attn::load_safetensors("layer.safetensors");
//   f.tensors.at("weight");  f.metadata.at("step");
//
// Layout: 8 bytes little-endian header length N, N bytes of JSON
// {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, "__metadata__": {..}},
// then the raw little-endian data. Loading checks every field and every offset before reading
// a byte of data, so a truncated or corrupted file is rejected whole with an attn::Error naming
// the file and the tensor: extents must be whole numbers >= 0 (not 3.5, -1, true or "3"), the
// element count and byte size are computed with overflow checks, each tensor's offsets must
// span exactly its byte size, and the tensors must tile the data section (no overlap, no gap).
// Floats, doubles, int64/int32 and bool/uint8 are read (converted to attn::real); writing uses
// F32 unless asked for F64.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "autograd/tensor.h"

namespace attn {

using TensorMap = std::map<std::string, Tensor>;
using Metadata = std::map<std::string, std::string>;

struct SafetensorsFile {
  TensorMap tensors;
  Metadata metadata;
};

enum class SaveDtype { kF32, kF64 };

// Writes atomically (see write_file_atomically): a crash leaves the old file intact.
void save_safetensors(const std::string& path,
                      const TensorMap& tensors,
                      const Metadata& metadata = {},
                      SaveDtype dtype = SaveDtype::kF32);
SafetensorsFile load_safetensors(const std::string& path);

// The same, to and from memory (the file functions use these).
std::string encode_safetensors(const TensorMap& tensors,
                               const Metadata& metadata = {},
                               SaveDtype dtype = SaveDtype::kF32);
SafetensorsFile decode_safetensors(const std::string& bytes, const std::string& source);

// Atomically replaces `path` with `bytes`: writes <path>.tmp.<pid>.<counter> in the same
// folder (a name no other process or thread uses), fsyncs it, renames it over `path`. Every
// failure removes the temporary and throws attn::Error naming the file; `path` is then
// untouched. Temporaries left by writers that were killed (their process is gone) are removed
// by the next successful write of the same file. Every file attnlab replaces goes through here.
void write_file_atomically(const std::string& path, const std::string& bytes);
// What goes between a target's name and the writer's pid in its temporary's name.
inline constexpr char kTempInfix[] = ".tmp.";
// A writer killed mid-write (kill -9, power loss) leaves its temporary behind; nothing can
// remove it at the time. This removes, in `folder`, the temporaries (of the file `name`, or of
// any file when `name` is empty) whose writer process has ended (kill(pid, 0) fails with
// ESRCH), never a live process's. write_file_atomically calls it after each write, and
// claiming a run folder calls it for the whole folder, so killed runs do not fill the disk
// with half-written checkpoints.
void remove_dead_writers_temporaries(const std::filesystem::path& folder,
                                     const std::string& name = "");
// The whole file; attn::Error naming it when it cannot be read (or is a folder).
std::string read_file(const std::string& path);

}  // namespace attn
