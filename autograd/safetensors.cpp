#include "autograd/safetensors.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <tuple>

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

// The safetensors format caps the header at 100 MB (its reference reader refuses more): a
// larger length is corruption or an attack, and parsing it would only cost memory.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

// One tensor's header entry, checked: a known dtype, a shape of whole numbers whose byte size
// fits in 64 bits, and offsets [begin, end) inside the data section spanning exactly that size.
struct Entry {
  std::string name;
  std::string dtype;
  Shape shape;
  uint64_t begin = 0, end = 0;
};

// A JSON whole number >= 0: 3 is one; 3.5, 3.0, -1, true and "3" are not.
std::optional<uint64_t> whole_number(const json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<int64_t>() >= 0)
    return static_cast<uint64_t>(v.get<int64_t>());
  return std::nullopt;
}

// Throws attn::Error with the reason (the caller adds the file and tensor names).
Entry parse_entry(const std::string& name, const json& value, uint64_t data_size) {
  if (!value.is_object())
    throw Error("the entry is not an object with dtype, shape and data_offsets");
  for (const char* key : {"dtype", "shape", "data_offsets"})
    if (!value.contains(key)) throw Error(fmt::format("the entry has no \"{}\"", key));
  Entry e;
  e.name = name;
  const json& dtype = value["dtype"];
  if (!dtype.is_string()) throw Error("\"dtype\" is not a string");
  e.dtype = dtype.get<std::string>();
  const size_t elem = dtype_size(e.dtype);
  if (elem == 0) throw Error(fmt::format("unknown dtype {}", dtype.dump()));
  if (e.dtype == "F16" || e.dtype == "BF16" || e.dtype == "I16" || e.dtype == "I8")
    throw Error(
        fmt::format("unsupported dtype {} (attnlab reads F32 F64 I64 I32 U8 BOOL)", e.dtype));

  const json& shape = value["shape"];
  if (!shape.is_array()) throw Error("\"shape\" is not an array");
  if (shape.size() > static_cast<size_t>(kMaxRank))
    throw Error(fmt::format("shape {} has rank {}; attnlab tensors have at most {} axes",
                            shape.dump(), shape.size(), kMaxRank));
  // The element count and byte size are computed with overflow checks: [2^62] F32 is 2^64
  // bytes, which wraps to 0 in 64-bit arithmetic and would match offsets [0, 0].
  uint64_t count = 1;
  for (const json& d : shape) {
    const std::optional<uint64_t> extent = whole_number(d);
    if (!extent || *extent > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      throw Error(fmt::format("shape {}: every extent must be a whole number >= 0, not {}",
                              shape.dump(), d.dump()));
    e.shape.push_back(static_cast<int64_t>(*extent));
    if (__builtin_mul_overflow(count, *extent, &count))
      throw Error(fmt::format("shape {} has more elements than 64 bits can count", shape.dump()));
  }
  uint64_t size = 0;
  if (__builtin_mul_overflow(count, static_cast<uint64_t>(elem), &size))
    throw Error(fmt::format("shape {} of {} needs more bytes than 64 bits can count", shape.dump(),
                            e.dtype));

  const json& offsets = value["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2)
    throw Error(fmt::format("\"data_offsets\" {} is not a pair [begin, end]", offsets.dump()));
  const std::optional<uint64_t> begin = whole_number(offsets[0]), end = whole_number(offsets[1]);
  if (!begin || !end)
    throw Error(fmt::format("\"data_offsets\" {} are not whole numbers >= 0", offsets.dump()));
  if (*begin > *end || *end > data_size)
    throw Error(fmt::format("data offsets [{}, {}] are outside the {}-byte data section", *begin,
                            *end, data_size));
  if (*end - *begin != size)
    throw Error(fmt::format("shape {} of {} needs {} bytes but its data offsets [{}, {}] hold {}",
                            shape_str(e.shape), e.dtype, size, *begin, *end, *end - *begin));
  e.begin = *begin;
  e.end = *end;
  return e;
}

// The format requires the tensors to tile the data section exactly: no overlaps (two tensors
// sharing bytes) and no gaps (unindexed bytes could hide another file's contents).
template <class Fail>
void check_layout(std::vector<Entry> entries, uint64_t data_size, Fail fail) {
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
  });
  uint64_t at = 0;
  const Entry* prev = nullptr;
  for (const Entry& e : entries) {
    if (e.begin < at)
      throw fail(
          fmt::format("tensors '{}' and '{}' overlap in the data section", prev->name, e.name));
    if (e.begin > at)
      throw fail(fmt::format("bytes [{}, {}) of the data section belong to no tensor (before '{}')",
                             at, e.begin, e.name));
    at = e.end;
    prev = &e;
  }
  if (at != data_size)
    throw fail(fmt::format("bytes [{}, {}) at the end of the data section belong to no tensor", at,
                           data_size));
}

// A temporary name no other writer uses: in the target's folder (rename is atomic only within
// one file system), with this process's id and a per-process counter, so two processes, two
// threads or two saves of one process never write the same temporary.
std::string temp_name(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  return fmt::format("{}{}{}.{}", path, kTempInfix, ::getpid(), ++counter);
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
  if (n > kMaxHeaderBytes)
    throw fail(fmt::format("the header claims {} bytes; the format allows at most {}", n,
                           kMaxHeaderBytes));
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
  const uint64_t data_size = bytes.size() - 8 - n;
  SafetensorsFile file;
  std::vector<Entry> entries;
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") {
      if (!value.is_object()) throw fail("__metadata__ is not an object");
      for (const auto& [k, v] : value.items()) {
        if (!v.is_string()) throw fail("metadata value for '" + k + "' is not a string");
        file.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    try {
      entries.push_back(parse_entry(name, value, data_size));
    } catch (const Error& e) {
      throw fail(fmt::format("tensor '{}': {}", name, e.what()));
    }
  }
  check_layout(entries, data_size, fail);
  // Every entry is valid and inside the data section: only now allocate and convert.
  const char* data = bytes.data() + 8 + n;
  for (const Entry& e : entries) {
    Tensor t = Tensor::empty(e.shape);
    const char* src = data + e.begin;
    if (e.dtype == "F32")
      convert<float>(src, t.numel(), t.data());
    else if (e.dtype == "F64")
      convert<double>(src, t.numel(), t.data());
    else if (e.dtype == "I64")
      convert<int64_t>(src, t.numel(), t.data());
    else if (e.dtype == "I32")
      convert<int32_t>(src, t.numel(), t.data());
    else
      convert<uint8_t>(src, t.numel(), t.data());
    file.tensors.emplace(e.name, std::move(t));
  }
  return file;
}

void write_file_atomically(const std::string& path, const std::string& bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw Error(fmt::format("cannot write the file '{}': a folder of that name exists", path));
  const std::string tmp = temp_name(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
  // Every failure below closes the descriptor and removes the temporary before throwing.
  auto give_up = [&](const char* step, int err) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return Error(fmt::format("{} '{}' failed: {} (the previous '{}', if any, is untouched)", step,
                             tmp, std::strerror(err), path));
  };
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) throw give_up("writing", errno);
    done += static_cast<size_t>(w);
  }
  if (::fsync(fd) != 0) throw give_up("flushing", errno);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw Error(fmt::format("closing '{}' failed: {}", tmp, std::strerror(err)));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw Error(fmt::format("renaming '{}' to '{}' failed: {}", tmp, path, std::strerror(err)));
  }
  const std::filesystem::path target(path);
  remove_dead_writers_temporaries(target.has_parent_path() ? target.parent_path() : ".",
                                  target.filename().string());
}

void remove_dead_writers_temporaries(const std::filesystem::path& folder, const std::string& name) {
  std::error_code ec;
  for (const auto& item : std::filesystem::directory_iterator(folder, ec)) {
    const std::string file = item.path().filename().string();
    const size_t at = file.rfind(kTempInfix);
    if (at == std::string::npos || at == 0 || (!name.empty() && file.substr(0, at) != name))
      continue;
    // The rest must be "<pid>.<counter>", both whole numbers.
    const std::string rest = file.substr(at + std::strlen(kTempInfix));
    char* end = nullptr;
    const long pid = std::strtol(rest.c_str(), &end, 10);
    if (pid <= 0 || *end != '.' || !std::isdigit(static_cast<unsigned char>(end[1]))) continue;
    std::strtoull(end + 1, &end, 10);
    if (*end != '\0' || pid == ::getpid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      std::filesystem::remove(item.path(), ec);
  }
}

std::string read_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw Error(fmt::format("cannot read '{}': it is a folder, not a file", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot open '{}' for reading: {}", path, std::strerror(errno)));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw Error(fmt::format("reading '{}' failed", path));
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
