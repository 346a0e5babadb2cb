// Run folders: one process at a time, and an earlier run is never silently replaced.
//
//   namespace fs = std::filesystem;
//   attn::train::RunFolderLock lock =
//       attn::train::claim_run_folder("runs/x", "--out", /*continuing=*/false);
//   ... write runs/x/config.json, metrics, checkpoint ...   // the lock is held until `lock` dies
//   fs::path fresh = attn::train::create_unique_folder("runs/train-reversal-20260101-120000");
//                                        // that name, or "-2", "-3" ... when it is taken
//
// claim_run_folder, in this order (each failure throws before anything is written):
//   1. `flag`'s path exists but is not a folder           -> attn::UsageError (exit 2)
//   2. the folder cannot be created (permissions, ...)    -> attn::Error naming flag and path (1)
//   3. another process holds the folder's lock            -> attn::Error naming it and the pid (1)
//      (once locked, temporaries left by killed writers are removed from the folder)
//   4. not continuing, and the folder holds an earlier run (config.json, metrics, checkpoint,
//      results) -> attn::UsageError: pass --resume, or choose another --out (exit 2)
// The lock is flock(2) on <folder>/.attnlab.lock, which holds the owner's pid. The kernel
// releases it when the process ends, however it ends (kill -9 included), so a crashed run
// never leaves a folder locked. The lock file itself stays (deleting it would let two
// processes lock two different files of the same name).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace attn::train {

class RunFolderLock {
 public:
  RunFolderLock() = default;
  // Locks an existing folder; attn::Error naming it (and the holder's pid) when it cannot.
  explicit RunFolderLock(const std::filesystem::path& folder);
  RunFolderLock(RunFolderLock&& other) noexcept;
  RunFolderLock& operator=(RunFolderLock&& other) noexcept;
  ~RunFolderLock();
  bool locked() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

inline constexpr char kLockFileName[] = ".attnlab.lock";

// The files of an earlier run found in `folder` (names only, empty when none).
std::vector<std::string> earlier_run_files(const std::filesystem::path& folder);

// Steps 1-4 above. `continuing`: the caller resumes the run in this folder (attnlab train
// --resume), so its files are expected.
RunFolderLock claim_run_folder(const std::filesystem::path& folder,
                               const std::string& flag,
                               bool continuing);

// Creates and returns `base`, or base-2, base-3, ... if taken (create_directory is atomic, so
// two processes starting in the same second get different folders). Parents are created;
// attn::Error naming the folder when it cannot be.
std::filesystem::path create_unique_folder(const std::filesystem::path& base);

}  // namespace attn::train
