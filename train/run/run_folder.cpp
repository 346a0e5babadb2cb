#include "train/run/run_folder.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "autograd/error.h"
#include "autograd/safetensors.h"

namespace attn::train {

namespace fs = std::filesystem;

namespace {

// What another run leaves in its folder: the train command's files and an experiment's.
const std::vector<std::string>& run_file_names() {
  static const std::vector<std::string> names{"config.json", "results.json",
                                              "metrics.csv", "metrics.jsonl",
                                              "report.html", "checkpoint.safetensors"};
  return names;
}

// The pid the holder wrote into the lock file ("" when it has not written it yet).
std::string holder_pid(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid;
}

}  // namespace

RunFolderLock::RunFolderLock(const fs::path& folder) {
  const fs::path file = folder / kLockFileName;
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    throw Error(fmt::format("cannot lock the run folder '{}': creating {} failed: {}",
                            folder.string(), kLockFileName, std::strerror(errno)));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const std::string pid = holder_pid(fd);
    ::close(fd);
    if (err == EWOULDBLOCK)
      throw Error(fmt::format(
          "the run folder '{}' is in use by another attnlab process{}; wait for it to finish "
          "(or stop it), or choose a different --out",
          folder.string(), pid.empty() ? "" : " (pid " + pid + ")"));
    throw Error(
        fmt::format("cannot lock the run folder '{}': {}", folder.string(), std::strerror(err)));
  }
  const std::string me = std::to_string(::getpid()) + "\n";
  // Best effort: the pid only makes a contender's message more useful.
  if (::ftruncate(fd, 0) == 0 && ::pwrite(fd, me.data(), me.size(), 0) < 0) {
  }
  fd_ = fd;
}

RunFolderLock::RunFolderLock(RunFolderLock&& other) noexcept : fd_(other.fd_) {
  other.fd_ = -1;
}

RunFolderLock& RunFolderLock::operator=(RunFolderLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

RunFolderLock::~RunFolderLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

std::vector<std::string> earlier_run_files(const fs::path& folder) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& name : run_file_names())
    if (fs::exists(folder / name, ec)) found.push_back(name);
  return found;
}

RunFolderLock claim_run_folder(const fs::path& folder, const std::string& flag, bool continuing) {
  std::error_code ec;
  if (fs::exists(folder, ec) && !fs::is_directory(folder, ec))
    throw UsageError(
        fmt::format("{} '{}' is an existing file, not a folder; give a folder for the run's files",
                    flag, folder.string()));
  fs::create_directories(folder, ec);
  if (ec)
    throw Error(fmt::format("{} '{}': cannot create the run folder: {}", flag, folder.string(),
                            ec.message()));
  if (::access(folder.c_str(), W_OK) != 0)
    throw Error(fmt::format("{} '{}': cannot write into the folder: {}", flag, folder.string(),
                            std::strerror(errno)));
  RunFolderLock lock(folder);
  remove_dead_writers_temporaries(folder);  // a killed earlier run's half-written files
  if (!continuing) {
    const std::vector<std::string> found = earlier_run_files(folder);
    if (!found.empty())
      throw UsageError(fmt::format(
          "{} '{}' already holds a run ({}); nothing was changed. To continue that run pass "
          "--resume {}/checkpoint.safetensors (attnlab train), to keep it choose a different "
          "{}, or delete the folder to start over",
          flag, folder.string(), fmt::join(found, ", "), folder.string(), flag));
  }
  return lock;
}

fs::path create_unique_folder(const fs::path& base) {
  std::error_code ec;
  if (base.has_parent_path()) fs::create_directories(base.parent_path(), ec);
  for (int k = 1; !ec; ++k) {
    const fs::path dir = k == 1 ? base : fs::path(fmt::format("{}-{}", base.string(), k));
    if (fs::create_directory(dir, ec)) return dir;  // false: it exists (another run has it)
  }
  throw Error(
      fmt::format("cannot create the run folder '{}': {} (pass --out with a folder you "
                  "can write to)",
                  base.string(), ec.message()));
}

}  // namespace attn::train
