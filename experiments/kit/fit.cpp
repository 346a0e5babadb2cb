#include "experiments/kit/fit.h"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <filesystem>

#include "experiments/kit/side_by_side.h"
#include "experiments/run_context.h"

namespace attn::experiments::kit {

std::string variant_file_stem(const std::string& variant) {
  std::string s;
  for (char c : variant) {
    const auto u = static_cast<unsigned char>(c);
    s += std::isalnum(u) || c == '-' || c == '_' ? static_cast<char>(std::tolower(u)) : '_';
  }
  return s.empty() ? "model" : s;
}

train::FitSettings fit_settings(const RunContext& ctx, const std::string& variant, int64_t steps) {
  train::FitSettings s;
  s.name = variant;
  s.steps = steps;
  if (!ctx.dir().empty()) {
    const std::filesystem::path folder = ctx.dir() / "training";
    std::filesystem::create_directories(folder);
    s.csv_path = (folder / (variant_file_stem(variant) + ".csv")).string();
  }
  // A bar on a terminal only; none inside a side_by_side job, where two would share one line.
  s.progress = ::isatty(::fileno(stdout)) && !in_side_by_side_job() ? train::ProgressMode::kBar
                                                                    : train::ProgressMode::kOff;
  return s;
}

train::FitSettings fit_settings(const RunContext& ctx,
                                const std::string& variant,
                                const train::options::OptimizerSettings& o) {
  train::FitSettings s = fit_settings(ctx, variant, o.steps);
  s.batch_size = o.batch_size;
  s.optimizer.kind = o.weight_decay > 0 ? "adamw" : "adam";
  s.optimizer.lr = o.lr;
  s.optimizer.weight_decay = o.weight_decay;
  s.optimizer.schedule = o.schedule;
  s.optimizer.warmup = o.warmup;
  s.optimizer.clip = o.clip;
  return s;
}

}  // namespace attn::experiments::kit
