// Run folders: one process at a time (flock), an earlier run never silently replaced, and
// every refusal naming the flag, the folder and (for a lock) the holder's pid.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "autograd/error.h"
#include "tests/error_message.h"
#include "tests/scratch_dir.h"
#include "train/run/run_folder.h"

namespace attn::train {

namespace fs = std::filesystem;

TEST_SUITE("train") {
  TEST_CASE("run folder: a second process gets an error naming the folder and the holder's pid") {
    const fs::path dir = testing::scratch_dir("run_folder_lock") / "run";
    int ready[2], release[2];
    REQUIRE(::pipe(ready) == 0);
    REQUIRE(::pipe(release) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {  // holds the folder until the parent writes a byte
      {
        RunFolderLock lock = claim_run_folder(dir, "--out", false);
        char c = 1;
        if (::write(ready[1], &c, 1) != 1) ::_exit(2);
        if (::read(release[0], &c, 1) != 1) ::_exit(3);
      }
      ::_exit(0);
    }
    char c = 0;
    REQUIRE(::read(ready[0], &c, 1) == 1);
    const std::string msg = testing::error_of([&] { claim_run_folder(dir, "--out", false); });
    INFO(msg);
    CHECK(msg.find(fmt::format("'{}' is in use", dir.string())) != std::string::npos);
    CHECK(msg.find(fmt::format("(pid {})", child)) != std::string::npos);
    CHECK(::write(release[1], &c, 1) == 1);
    int status = 0;
    ::waitpid(child, &status, 0);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    // Released when the holder ends: the folder can be claimed again.
    CHECK_NOTHROW(claim_run_folder(dir, "--out", false));
    // Within one process a second claim is refused too (flock is per open file).
    RunFolderLock mine = claim_run_folder(dir, "--out", false);
    CHECK(testing::error_of([&] { claim_run_folder(dir, "--out", false); }).find("is in use") !=
          std::string::npos);
  }

  TEST_CASE("run folder: an earlier run is refused unless continuing; files and bad paths") {
    const fs::path root = testing::scratch_dir("run_folder_claim");
    const fs::path dir = root / "done";
    fs::create_directories(dir);
    std::ofstream(dir / "checkpoint.safetensors") << "weights";
    std::ofstream(dir / "metrics.csv") << "step";
    CHECK(earlier_run_files(dir) ==
          std::vector<std::string>{"metrics.csv", "checkpoint.safetensors"});
    CHECK_THROWS_WITH_AS(claim_run_folder(dir, "--out", false),
                         doctest::Contains("already holds a run (metrics.csv, "
                                           "checkpoint.safetensors); nothing was changed"),
                         UsageError);
    CHECK_THROWS_WITH_AS(
        claim_run_folder(dir, "--out", false),
        doctest::Contains(("--resume " + dir.string() + "/checkpoint.safetensors").c_str()),
        UsageError);
    CHECK_NOTHROW(claim_run_folder(dir, "--out", true));
    std::ifstream in(dir / "checkpoint.safetensors");
    std::string kept;
    in >> kept;
    CHECK(kept == "weights");

    const fs::path file = root / "a-file";
    std::ofstream(file) << "x";
    CHECK_THROWS_WITH_AS(
        claim_run_folder(file, "--out", false),
        doctest::Contains(("--out '" + file.string() + "' is an existing file").c_str()),
        UsageError);
    const std::string below_file =
        testing::error_of([&] { claim_run_folder(file / "sub", "--out", false); });
    CHECK(below_file.find("--out '" + (file / "sub").string() + "': cannot create") !=
          std::string::npos);
    CHECK_NOTHROW(claim_run_folder(root / "new" / "deeper", "--out", false));  // created
    CHECK(fs::is_directory(root / "new" / "deeper"));
  }

  TEST_CASE("run folder: claiming it removes the temporaries of killed writers only") {
    const fs::path dir = testing::scratch_dir("run_folder_temporaries");
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    ::waitpid(child, nullptr, 0);  // its pid names no process now
    const std::string dead = "checkpoint.safetensors.tmp." + std::to_string(child) + ".7";
    const std::string live = "metrics.csv.tmp." + std::to_string(::getppid()) + ".2";
    for (const std::string& name : {dead, live, std::string("notes.tmp.txt")})
      std::ofstream(dir / name) << "x";
    claim_run_folder(dir, "--out", false);
    CHECK_FALSE(fs::exists(dir / dead));
    CHECK(fs::exists(dir / live));
    CHECK(fs::exists(dir / "notes.tmp.txt"));
  }

  TEST_CASE("run folder: unique names for runs started in the same second") {
    const fs::path root = testing::scratch_dir("run_folder_unique");
    CHECK(create_unique_folder(root / "runs" / "x") == root / "runs" / "x");
    CHECK(create_unique_folder(root / "runs" / "x") == root / "runs" / "x-2");
    CHECK(create_unique_folder(root / "runs" / "x") == root / "runs" / "x-3");
  }
}

}  // namespace attn::train
