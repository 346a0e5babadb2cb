#include "train/metrics_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "autograd/error.h"
#include "autograd/safetensors.h"

namespace attn::train {

namespace {
void make_parent(const std::string& path) {
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
}

std::string number(double v) {
  return std::isfinite(v) ? fmt::format("{:.9g}", v) : (std::isnan(v) ? "nan" : "inf");
}

// One JSON object; non-finite values (which JSON cannot hold) become the strings "nan"/"inf".
std::string to_json(int64_t step, const std::string& split, const Metrics& values) {
  nlohmann::json j = {{"step", step}, {"split", split}};
  for (const auto& [k, v] : values)
    j[k] = std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(number(v));
  return j.dump();
}
}  // namespace

MetricsLog::MetricsLog(std::string csv_path, std::string jsonl_path, int64_t keep_until_step)
    : csv_path_(std::move(csv_path)), jsonl_path_(std::move(jsonl_path)) {
  if (keep_until_step >= 0) reload(keep_until_step);
  if (!jsonl_path_.empty()) {
    make_parent(jsonl_path_);
    std::string kept;
    for (const auto& r : rows_) kept += to_json(r.step, r.split, r.values) + "\n";
    write_file_atomically(jsonl_path_, kept);
    jsonl_.open(jsonl_path_, std::ios::app);
    if (!jsonl_) throw Error(fmt::format("cannot write metrics to '{}'", jsonl_path_));
  }
  if (!csv_path_.empty()) {
    make_parent(csv_path_);
    write_file_atomically(csv_path_, csv());
  }
}

// Reads back the earlier records from the JSONL (which has every field at full precision).
void MetricsLog::reload(int64_t keep_until_step) {
  if (!jsonl_path_.empty() && std::filesystem::exists(jsonl_path_)) {
    std::istringstream in(read_file(jsonl_path_));
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(line);
      } catch (const nlohmann::json::exception&) {
        break;  // a line cut short by the interruption: nothing after it is trusted
      }
      Row r{j.value("step", int64_t{-1}), j.value("split", std::string()), {}};
      for (const auto& [k, v] : j.items())
        if (k != "step" && k != "split") r.values[k] = v.is_number() ? v.get<double>() : NAN;
      if (r.step >= 0 && r.step <= keep_until_step) add_row(std::move(r));
    }
  }
}

void MetricsLog::add_row(Row row) {
  for (const auto& [k, v] : row.values)
    if (std::find(columns_.begin(), columns_.end(), k) == columns_.end()) columns_.push_back(k);
  rows_.push_back(std::move(row));
}

void MetricsLog::record(int64_t step, const std::string& split, const Metrics& values) {
  add_row({step, split, values});
  if (jsonl_.is_open()) {
    jsonl_ << to_json(step, split, values) << '\n';
    jsonl_.flush();
  }
  if (!csv_path_.empty()) write_file_atomically(csv_path_, csv());
}

std::string MetricsLog::csv() const {
  std::string out = "step,split";
  for (const auto& c : columns_) out += "," + c;
  out += '\n';
  for (const auto& r : rows_) {
    out += fmt::format("{},{}", r.step, r.split);
    for (const auto& c : columns_) {
      auto it = r.values.find(c);
      out += "," + (it == r.values.end() ? std::string() : number(it->second));
    }
    out += '\n';
  }
  return out;
}

}  // namespace attn::train
