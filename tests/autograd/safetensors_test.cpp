// The safetensors reader against crafted headers: every malformed file is an attn::Error that
// names the file and the tensor, never a crash or a half-read; and the atomic writer's
// temporaries (unique per process and thread, removed on every failure).
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "autograd/error.h"
#include "autograd/safetensors.h"
#include "tests/scratch_dir.h"

namespace attn {

namespace {

namespace fs = std::filesystem;

// A file: 8-byte little-endian header length, the header text, then `data`.
std::string file_with(const std::string& header, const std::string& data = "") {
  std::string out(8, '\0');
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + data;
}

// One tensor "w" with this shape and offsets (and F32 unless told), plus `data`.
std::string one_tensor(const std::string& shape,
                       const std::string& offsets,
                       const std::string& data = "",
                       const std::string& dtype = "\"F32\"") {
  return file_with(
      fmt::format(R"({{"w":{{"dtype":{},"shape":{},"data_offsets":{}}}}})", dtype, shape, offsets),
      data);
}

// The message of the Error decode_safetensors throws ("" if it accepts the bytes).
std::string rejection(const std::string& bytes) {
  try {
    decode_safetensors(bytes, "crafted.safetensors");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Rejected, with a message naming the file, the tensor and `why`.
void check_rejected(const std::string& bytes, const std::string& why, const char* tensor = "'w'") {
  const std::string msg = rejection(bytes);
  INFO(msg);
  CHECK(msg.find("crafted.safetensors") != std::string::npos);
  CHECK(msg.find(tensor) != std::string::npos);
  CHECK(msg.find(why) != std::string::npos);
}

std::vector<std::string> leftovers(const fs::path& dir, const std::string& stem) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind(stem + ".tmp", 0) == 0)
      out.push_back(e.path().filename().string());
  return out;
}

}  // namespace

TEST_SUITE("autograd") {
  TEST_CASE("safetensors: a valid file reads back; a zero-size tensor is fine") {
    const TensorMap m{{"a", Tensor::from_vector({2, 2}, {1, 2, 3, 4})},
                      {"b", Tensor::zeros({0, 3})},
                      {"c", Tensor::from_vector({1}, {5})}};
    const SafetensorsFile f = decode_safetensors(encode_safetensors(m, {{"k", "v"}}), "ok");
    CHECK(f.tensors.at("a").to_vector() == m.at("a").to_vector());
    CHECK(f.tensors.at("b").shape() == Shape{0, 3});
    CHECK(f.metadata.at("k") == "v");
    CHECK(rejection(one_tensor("[2]", "[0,8]", std::string(8, '\0'))).empty());
  }

  TEST_CASE("safetensors: a shape whose byte size overflows 64 bits is rejected, not read") {
    // 2^62 F32 elements are 2^64 bytes, which wraps to 0 and matched offsets [0, 0]: the loader
    // then allocated and read 2^62 floats (a segfault, exit 139, before this check).
    check_rejected(one_tensor("[4611686018427387904]", "[0,0]"), "more bytes than 64 bits");
    check_rejected(one_tensor("[4294967296,4294967296]", "[0,0]"), "more elements than 64 bits");
    check_rejected(one_tensor("[2147483648,2147483648]", "[0,0]"), "more bytes than 64 bits");
    check_rejected(one_tensor("[65536,65536,65536,65536]", "[0,0]"), "more elements than 64");
    check_rejected(one_tensor("[9223372036854775808]", "[0,0]", "", "\"U8\""), "whole number");
    check_rejected(one_tensor("[18446744073709551616]", "[0,0]"), "whole number");
  }

  TEST_CASE("safetensors: extents must be whole numbers >= 0; rank at most 4") {
    const std::string data(48, '\0');
    for (const char* shape : {"[3.5,4]", "[3.0,4]", "[\"3\",4]", "[-3,4]", "[true,4]", "[null,4]",
                              "[[3],4]", "[1e1,4]"})
      check_rejected(one_tensor(shape, "[0,48]", data), "whole number >= 0");
    check_rejected(one_tensor("[1,1,1,1,1]", "[0,4]", data.substr(0, 4)), "rank 5");
    check_rejected(one_tensor("3", "[0,4]", data.substr(0, 4)), "not an array");
  }

  TEST_CASE("safetensors: offsets are an ordered pair in range spanning the byte size") {
    const std::string data(16, '\0');
    check_rejected(one_tensor("[2]", "[8,0]", data), "outside the 16-byte data section");
    check_rejected(one_tensor("[2]", "[8,16]", data), "belong to no tensor");  // a gap before
    check_rejected(one_tensor("[4]", "[0,32]", data), "outside the 16-byte data section");
    check_rejected(one_tensor("[2]", "[0,16]", data), "needs 8 bytes");
    check_rejected(one_tensor("[2]", "[0,-8]", data), "not whole numbers");
    check_rejected(one_tensor("[2]", "[0.0,8.0]", data), "not whole numbers");
    check_rejected(one_tensor("[2]", "[0]", data), "not a pair");
    check_rejected(one_tensor("[2]", "[0,8,16]", data), "not a pair");
    check_rejected(one_tensor("[2]", "\"0-8\"", data), "not a pair");
  }

  TEST_CASE("safetensors: tensors tile the data section (no overlap, no gap, no tail)") {
    const std::string data(16, '\0');
    const char* two = R"({{"a":{{"dtype":"F32","shape":[2],"data_offsets":{}}},)"
                      R"("b":{{"dtype":"F32","shape":[2],"data_offsets":{}}}}})";
    CHECK(rejection(file_with(fmt::format(fmt::runtime(two), "[0,8]", "[8,16]"), data)).empty());
    check_rejected(file_with(fmt::format(fmt::runtime(two), "[0,8]", "[4,12]"), data), "overlap",
                   "'a' and 'b'");
    check_rejected(file_with(fmt::format(fmt::runtime(two), "[0,8]", "[0,8]"), data), "overlap",
                   "'a' and 'b'");
    check_rejected(one_tensor("[2]", "[0,8]", data), "bytes [8, 16) at the end", "");
  }

  TEST_CASE("safetensors: dtype, entry form and header length are checked") {
    const std::string data(8, '\0');
    check_rejected(one_tensor("[2]", "[0,8]", data, "\"F8\""), "unknown dtype");
    check_rejected(one_tensor("[2]", "[0,8]", data, "5"), "not a string");
    check_rejected(one_tensor("[4]", "[0,8]", data, "\"F16\""), "unsupported dtype F16");
    check_rejected(file_with(R"({"w":[1,2]})"), "not an object");
    check_rejected(file_with(R"({"w":{"dtype":"F32","shape":[0]}})"), "no \"data_offsets\"");
    std::string huge = file_with("{}");
    huge[7] = 0x7f;  // a header length near 2^63
    CHECK(rejection(huge).find("the format allows at most") != std::string::npos);
    CHECK(rejection(file_with("[1,2]")).find("not a JSON object") != std::string::npos);
    CHECK(rejection("abc").find("too short") != std::string::npos);
  }

  TEST_CASE("atomic writes: a failed write leaves no temporary and names the file") {
    const fs::path dir = testing::scratch_dir("atomic_fail");
    const fs::path target = dir / "out";
    fs::create_directories(target / "inside");  // a non-empty folder where the file should go
    CHECK_THROWS_WITH_AS(write_file_atomically(target.string(), "x"),
                         doctest::Contains(fmt::format("'{}': a folder", target.string()).c_str()),
                         Error);
    CHECK(leftovers(dir, "out").empty());
    CHECK_THROWS_WITH_AS(write_file_atomically((dir / "no" / "such" / "f").string(), "x"),
                         doctest::Contains("no/such/f"), Error);
    CHECK_THROWS_WITH_AS(read_file(target.string()), doctest::Contains("it is a folder"), Error);
  }

  TEST_CASE("atomic writes: concurrent writers of one file never collide") {
    // With one fixed temporary name, two writers truncate and rename each other's file
    // (rename then fails with ENOENT, or a reader sees a mix). Unique names: every write lands
    // whole, the last rename wins.
    const fs::path dir = testing::scratch_dir("atomic_race");
    const std::string path = (dir / "shared.txt").string();
    const std::string a(20000, 'a'), b(30000, 'b');
    std::atomic<int> failures{0};
    auto writer = [&](const std::string& text) {
      for (int i = 0; i < 100; ++i) try {
          write_file_atomically(path, text);
        } catch (const Error&) {
          ++failures;
        }
    };
    std::thread t1(writer, a), t2(writer, b);
    const pid_t child = ::fork();
    if (child == 0) {  // a second process too
      writer(a);
      ::_exit(failures.load() == 0 ? 0 : 1);
    }
    t1.join();
    t2.join();
    int status = 0;
    ::waitpid(child, &status, 0);
    CHECK(failures.load() == 0);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    const std::string last = read_file(path);
    CHECK((last == a || last == b));
    CHECK(leftovers(dir, "shared.txt").empty());
  }

  TEST_CASE("atomic writes: a dead writer's temporary is removed, a live one's is kept") {
    const fs::path dir = testing::scratch_dir("atomic_dead");
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    ::waitpid(child, nullptr, 0);  // reaped: its pid names no process now
    const fs::path dead = dir / fmt::format("f.bin{}{}.1", kTempInfix, child);
    const fs::path live = dir / fmt::format("f.bin{}{}.1", kTempInfix, ::getppid());
    std::ofstream(dead) << "half";
    std::ofstream(live) << "busy";
    write_file_atomically((dir / "f.bin").string(), "whole");
    CHECK_FALSE(fs::exists(dead));
    CHECK(fs::exists(live));
    CHECK(read_file((dir / "f.bin").string()) == "whole");
  }
}

}  // namespace attn
