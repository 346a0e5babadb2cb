// A folder for the files of sub-runs nobody reads afterwards.
//
//   kit::ScratchFolder models(ctx.dir(), "models", "recurrent-baselines");
//   train_config.out = (models.path() / "lstm").string();
//
// With a run folder, <run folder>/<sub> (created, kept with the run). Without one (unit tests
// run experiments with writing off), a fresh folder under the system's temporary folder named
// attnlab-<name>-<pid>[-k], removed with everything in it when the ScratchFolder is destroyed.
#pragma once

#include <filesystem>
#include <string>

namespace attn::experiments::kit {

class ScratchFolder {
 public:
  // Always temporary.
  explicit ScratchFolder(const std::string& name);
  // Inside the run folder when there is one, else temporary.
  ScratchFolder(const std::filesystem::path& run_dir,
                const std::string& sub,
                const std::string& name);
  ~ScratchFolder();
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;

  const std::filesystem::path& path() const { return path_; }
  bool temporary() const { return temporary_; }

 private:
  std::filesystem::path path_;
  bool temporary_ = false;
};

}  // namespace attn::experiments::kit
