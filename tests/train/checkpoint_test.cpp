// Checkpoints: exact resume, determinism, atomic writes under a killed writer, and rejection
// of truncated, corrupted and mismatched files (before anything is changed).
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "autograd/error.h"
#include "tests/scratch_dir.h"
#include "tests/train/tiny_run.h"

namespace attn::train {

namespace {
using testing::TinyRun;

std::string temp_path(const std::string& name) {
  static const std::filesystem::path dir = attn::testing::scratch_dir("checkpoint");
  return (dir / name).string();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

bool same_weights(const nn::Module& a, const nn::Module& b) {
  const TensorMap x = a.state_dict(), y = b.state_dict();
  if (x.size() != y.size()) return false;
  for (const auto& [name, t] : x)
    if (t.to_vector() != y.at(name).to_vector()) return false;
  return true;
}

TrainerConfig quiet(int64_t max_steps) {
  return {.max_steps = max_steps, .log_every = 0, .progress = ProgressMode::kOff};
}
}  // namespace

TEST_SUITE("train") {
  TEST_CASE(
      "resume is bit-identical: N steps straight == N/2, save, load into fresh objects, N/2") {
    constexpr int64_t kSteps = 24;
    TinyRun straight(1);
    std::vector<double> losses;
    for (int64_t s = 0; s < kSteps; ++s) losses.push_back(straight.step().loss);

    const std::string path = temp_path("resume.safetensors");
    TinyRun first(1);
    Trainer half(
        quiet(kSteps / 2), [&](int64_t) { return first.step(); }, {},
        [&](int64_t step) { save_checkpoint(path, first.state(), step); });
    TrainResult a = half.run();

    TinyRun fresh(77);  // different initial weights, stream seed and dropout seed
    TrainingState st = fresh.state();
    CheckpointInfo info = load_checkpoint(path, st);
    CHECK(info.step == kSteps / 2);
    Trainer rest(quiet(kSteps), [&](int64_t) { return fresh.step(); });
    TrainResult b = rest.run(info.step);

    std::vector<double> resumed = a.losses;
    resumed.insert(resumed.end(), b.losses.begin(), b.losses.end());
    REQUIRE(resumed.size() == losses.size());
    for (size_t i = 0; i < losses.size(); ++i) CHECK(resumed[i] == losses[i]);  // bitwise
    CHECK(same_weights(fresh.model, straight.model));
    CHECK(fresh.opt.state_dict().at("0.exp_avg").to_vector() ==
          straight.opt.state_dict().at("0.exp_avg").to_vector());
    CHECK(fresh.stream.count() == straight.stream.count());
  }

  TEST_CASE("same seed and thread count give a bitwise-identical loss curve") {
    TinyRun a(5), b(5), c(6);
    bool differs = false;
    for (int s = 0; s < 15; ++s) {
      const double la = a.step().loss, lb = b.step().loss, lc = c.step().loss;
      CHECK(la == lb);
      differs = differs || la != lc;
    }
    CHECK(differs);  // and a different seed really changes it
    CHECK(same_weights(a.model, b.model));
  }

  TEST_CASE("a writer killed mid-file leaves the previous checkpoint loadable") {
    const std::string path = temp_path("atomic.safetensors");
    TinyRun run(2);
    run.step();
    save_checkpoint(path, run.state(), 1);
    const std::string good = read_file(path);
    // A much bigger checkpoint (a large model) that the child starts writing over it.
    TinyRun big(3, 4096);
    const std::string bytes = encode_checkpoint(big.state(), 5);
    REQUIRE(bytes.size() > 4 * 64 * 1024);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      // Limit the file size: the kernel kills the writer with SIGXFSZ in the middle of write().
      std::signal(SIGXFSZ, SIG_DFL);
      rlimit lim{64 * 1024, 64 * 1024};
      ::setrlimit(RLIMIT_FSIZE, &lim);
      try {
        write_file_atomically(path, bytes);
      } catch (...) {
      }
      ::_exit(0);  // not reached when the kill happens
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    REQUIRE(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGXFSZ);
    // The half-written temporary (named after the writer's pid) is there, is rejected, and
    // the real file is untouched.
    std::string tmp;
    const std::string stem = fmt::format("{}{}{}.", path, kTempInfix, child);
    for (const auto& e :
         std::filesystem::directory_iterator(std::filesystem::path(path).parent_path()))
      if (e.path().string().rfind(stem, 0) == 0) tmp = e.path().string();
    REQUIRE(!tmp.empty());
    CHECK(std::filesystem::file_size(tmp) == 64 * 1024);
    CHECK_THROWS_AS(read_checkpoint_file(tmp), Error);
    CHECK(read_file(path) == good);
    TinyRun fresh(9);
    TrainingState st = fresh.state();
    CHECK(load_checkpoint(path, st).step == 1);
    CHECK(same_weights(fresh.model, run.model));
    // The next save removes the dead writer's temporary.
    save_checkpoint(path, run.state(), 2);
    CHECK(load_checkpoint(path, st).step == 2);
    CHECK_FALSE(std::filesystem::exists(tmp));
  }

  TEST_CASE("truncated and corrupted checkpoints are rejected and change nothing") {
    const std::string path = temp_path("corrupt.safetensors");
    TinyRun run(4);
    run.step();
    save_checkpoint(path, run.state(), 1);
    const std::string bytes = read_file(path);
    uint64_t header_len = 0;
    for (int i = 0; i < 8; ++i)
      header_len |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);

    TinyRun victim(8);
    victim.step();
    const TensorMap before = victim.model.state_dict();
    const std::string stream_before = victim.stream.position();
    const std::string rng_before = victim.model.dropout_rng->state();
    auto rejected = [&](const std::string& file_bytes, const std::string& why) {
      const std::string bad = temp_path("bad.safetensors");
      write_bytes(bad, file_bytes);
      TrainingState st = victim.state();
      bool threw = false;
      try {
        load_checkpoint(bad, st);
      } catch (const Error& e) {
        threw = std::string(e.what()).find(bad) != std::string::npos;  // names the file
      }
      INFO(why);
      CHECK(threw);
    };
    rejected(bytes.substr(0, bytes.size() / 2), "truncated in the data");
    rejected(bytes.substr(0, 8 + header_len / 2), "truncated in the header");
    rejected(bytes.substr(0, 5), "truncated in the length");
    rejected("", "empty");
    for (uint64_t at = 8; at < 8 + header_len; at += header_len / 97 + 1) {  // ~100 spots
      std::string flipped = bytes;
      flipped[at] = static_cast<char>(flipped[at] ^ 0x04);
      rejected(flipped, fmt::format("header byte {} flipped", at));
    }
    for (size_t at = 8 + header_len; at < bytes.size(); at += bytes.size() / 41 + 1) {
      std::string flipped = bytes;
      flipped[at] = static_cast<char>(flipped[at] ^ 0x10);
      rejected(flipped, fmt::format("data byte {} flipped", at));
    }
    const TensorMap after = victim.model.state_dict();
    for (const auto& [name, t] : before) CHECK(t.to_vector() == after.at(name).to_vector());
    CHECK(victim.stream.position() == stream_before);
    CHECK(victim.model.dropout_rng->state() == rng_before);
  }

  TEST_CASE("a checkpoint of another shape or optimizer is rejected with every problem listed") {
    const std::string path = temp_path("shapes.safetensors");
    TinyRun small(1, 8);
    small.step();
    save_checkpoint(path, small.state(), 1);
    TinyRun other(2, 16);
    const TensorMap before = other.model.state_dict();
    TrainingState st = other.state();
    try {
      load_checkpoint(path, st);
      FAIL("a mismatched checkpoint loaded");
    } catch (const Error& e) {
      const std::string msg = e.what();
      CHECK(msg.find("model tensor 'emb.weight' has shape (14,8) in the file but (14,16)") !=
            std::string::npos);
      CHECK(msg.find("'out.weight'") != std::string::npos);
      CHECK(msg.find("cannot load optimizer state") != std::string::npos);
    }
    for (const auto& [name, t] : before)
      CHECK(t.to_vector() == other.model.state_dict().at(name).to_vector());

    TinyRun same(3, 8);
    Sgd sgd(same.model.parameters(), {.lr = 0.1});
    Generator extra(1);
    TrainingState wrong{
        .model = &same.model,
        .optimizer = &sgd,
        .generators = {{"dropout", same.model.dropout_rng.get()}, {"sampler", &extra}}};
    CHECK_THROWS_WITH_AS(load_checkpoint(path, wrong),
                         doctest::Contains("optimizer is Adam in the file but SGD here"), Error);
    CHECK_THROWS_WITH_AS(load_checkpoint(path, wrong),
                         doctest::Contains("generator 'sampler' is not in the file"), Error);
    CHECK_THROWS_WITH_AS(load_checkpoint(temp_path("none.safetensors"), wrong),
                         doctest::Contains("cannot open"), Error);
    save_safetensors(path, same.model.state_dict());
    CHECK_THROWS_WITH_AS(load_checkpoint(path, wrong),
                         doctest::Contains("not an attnlab checkpoint"), Error);
  }

  TEST_CASE("extra metadata travels with the checkpoint") {
    const std::string path = temp_path("extra.safetensors");
    TinyRun run(1);
    save_checkpoint(path, run.state(), 0, {{"task", "copy"}});
    TrainingState st = run.state();
    CHECK(load_checkpoint(path, st).extra.at("task") == "copy");
  }
}

}  // namespace attn::train
