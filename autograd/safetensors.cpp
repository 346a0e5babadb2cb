#include "autograd/safetensors.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "autograd/error.h"

namespace attn {

namespace {

using json = nlohmann::json;

size_t dtype_size(const std::string& dtype) {
  if (dtype == "F32" || dtype == "I32") return 4;
  if (dtype == "F64" || dtype == "I64") return 8;
  if (dtype == "BOOL" || dtype == "U8" || dtype == "I8") return 1;
  if (dtype == "F16" || dtype == "BF16" || dtype == "I16") return 2;
  return 0;
}

template <class T>
void convert(const char* src, int64_t n, real* dst) {
  for (int64_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, src + i * sizeof(T), sizeof(T));
    dst[i] = static_cast<real>(v);
  }
}

}  // namespace

std::string encode_safetensors(const TensorMap& tensors,
                               const Metadata& metadata,
                               SaveDtype dtype) {
  const size_t elem = dtype == SaveDtype::kF32 ? 4 : 8;
  json header = json::object();
  size_t offset = 0;
  for (const auto& [name, t] : tensors) {
    const size_t bytes = static_cast<size_t>(t.numel()) * elem;
    header[name] = {{"dtype", dtype == SaveDtype::kF32 ? "F32" : "F64"},
                    {"shape", t.shape()},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::string head = header.dump();
  head.append((8 - head.size() % 8) % 8, ' ');  // align the data section to 8 bytes
  std::string out(8, '\0');
  const uint64_t n = head.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  out += head;
  out.reserve(out.size() + offset);
  for (const auto& [name, t] : tensors) {
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (dtype == SaveDtype::kF32) {
        const float v = static_cast<float>(t[i]);
        out.append(reinterpret_cast<const char*>(&v), 4);
      } else {
        const double v = static_cast<double>(t[i]);
        out.append(reinterpret_cast<const char*>(&v), 8);
      }
    }
  }
  return out;
}

SafetensorsFile decode_safetensors(const std::string& bytes, const std::string& source) {
  auto fail = [&](const std::string& why) {
    return Error(fmt::format("safetensors file '{}' rejected: {}", source, why));
  };
  if (bytes.size() < 8)
    throw fail(fmt::format("only {} bytes, too short for a header", bytes.size()));
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i)
    n |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  if (n > bytes.size() - 8)
    throw fail(
        fmt::format("header claims {} bytes but the file has only {} after the length "
                    "(truncated?)",
                    n, bytes.size() - 8));
  json header;
  try {
    header = json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<int64_t>(n));
  } catch (const json::exception& e) {
    throw fail(std::string("header is not valid JSON: ") + e.what());
  }
  if (!header.is_object()) throw fail("header is not a JSON object");
  const size_t data_size = bytes.size() - 8 - n;
  const char* data = bytes.data() + 8 + n;
  SafetensorsFile file;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) throw fail("__metadata__ is not an object");
      for (const auto& [k, v] : entry.items()) {
        if (!v.is_string()) throw fail("metadata value for '" + k + "' is not a string");
        file.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    try {
      const std::string dtype = entry.at("dtype").get<std::string>();
      const Shape shape = entry.at("shape").get<Shape>();
      const auto offsets = entry.at("data_offsets").get<std::vector<uint64_t>>();
      const size_t elem = dtype_size(dtype);
      if (elem == 0 || dtype == "F16" || dtype == "BF16" || dtype == "I16" || dtype == "I8")
        throw fail(fmt::format("tensor '{}' has unsupported dtype {}", name, dtype));
      check_shape(shape, ("safetensors tensor '" + name + "'").c_str());
      if (offsets.size() != 2 || offsets[0] > offsets[1] || offsets[1] > data_size)
        throw fail(fmt::format("tensor '{}' has data offsets outside the {}-byte data section",
                               name, data_size));
      const uint64_t expect = static_cast<uint64_t>(numel(shape)) * elem;
      if (offsets[1] - offsets[0] != expect)
        throw fail(fmt::format("tensor '{}' of shape {} {} needs {} bytes, offsets give {}", name,
                               shape_str(shape), dtype, expect, offsets[1] - offsets[0]));
      ranges.emplace_back(offsets[0], offsets[1]);
      Tensor t = Tensor::empty(shape);
      const char* src = data + offsets[0];
      if (dtype == "F32")
        convert<float>(src, t.numel(), t.data());
      else if (dtype == "F64")
        convert<double>(src, t.numel(), t.data());
      else if (dtype == "I64")
        convert<int64_t>(src, t.numel(), t.data());
      else if (dtype == "I32")
        convert<int32_t>(src, t.numel(), t.data());
      else
        convert<uint8_t>(src, t.numel(), t.data());
      file.tensors.emplace(name, std::move(t));
    } catch (const json::exception& e) {
      throw fail(fmt::format("entry '{}' is malformed: {}", name, e.what()));
    }
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second) throw fail("two tensors' data ranges overlap");
  return file;
}

void write_file_atomically(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw Error(fmt::format("cannot write '{}': {}", tmp, std::strerror(errno)));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw Error(fmt::format("writing '{}' failed: {}", tmp, std::strerror(err)));
    }
    done += static_cast<size_t>(w);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    throw Error(fmt::format("flushing '{}' to disk failed: {}", tmp, std::strerror(errno)));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw Error(fmt::format("renaming '{}' to '{}' failed: {}", tmp, path, std::strerror(errno)));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot open '{}' for reading", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void save_safetensors(const std::string& path,
                      const TensorMap& tensors,
                      const Metadata& metadata,
                      SaveDtype dtype) {
  write_file_atomically(path, encode_safetensors(tensors, metadata, dtype));
}

SafetensorsFile load_safetensors(const std::string& path) {
  return decode_safetensors(read_file(path), path);
}

}  // namespace attn
