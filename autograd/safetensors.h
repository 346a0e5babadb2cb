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
// a byte of data, so a truncated or corrupted file is rejected whole with a message naming it.
// Floats, doubles, int64/int32 and bool/uint8 are read (converted to attn::real); writing uses
// F32 unless asked for F64.
#pragma once

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

// Writes to path.tmp, fsyncs, then renames over path: a crash leaves the old file intact.
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

// Atomically replaces `path` with `bytes` (temp file in the same folder, fsync, rename).
void write_file_atomically(const std::string& path, const std::string& bytes);
std::string read_file(const std::string& path);

}  // namespace attn
