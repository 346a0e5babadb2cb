#include "experiments/kit/scratch_folder.h"

#include <fmt/format.h>

#include <unistd.h>

#include "train/run/run_folder.h"

namespace attn::experiments::kit {

namespace fs = std::filesystem;

ScratchFolder::ScratchFolder(const std::string& name) : ScratchFolder(fs::path(), "", name) {}

ScratchFolder::ScratchFolder(const fs::path& run_dir,
                             const std::string& sub,
                             const std::string& name) {
  if (run_dir.empty()) {
    path_ = train::create_unique_folder(fs::temp_directory_path() /
                                        fmt::format("attnlab-{}-{}", name, ::getpid()));
    temporary_ = true;
  } else {
    path_ = run_dir / sub;
    fs::create_directories(path_);
  }
}

ScratchFolder::~ScratchFolder() {
  std::error_code ignored;
  if (temporary_ && !path_.empty()) fs::remove_all(path_, ignored);
}

}  // namespace attn::experiments::kit
