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
  const std::vector<Row> kept = keep_until_step >= 0 ? reload(keep_until_step) : std::vector<Row>{};
  for (const auto& r : kept) add_columns(r.values);
  if (!jsonl_path_.empty()) {
    make_parent(jsonl_path_);
    std::string text;
    for (const auto& r : kept) text += to_json(r.step, r.split, r.values) + "\n";
    write_file_atomically(jsonl_path_, text);
    jsonl_.open(jsonl_path_, std::ios::app);
    if (!jsonl_) throw Error(fmt::format("cannot write metrics to '{}'", jsonl_path_));
  }
  if (!csv_path_.empty()) {
    make_parent(csv_path_);
    std::string text = csv_header();
    for (const auto& r : kept) text += csv_line(r);
    write_file_atomically(csv_path_, text);
  }
}

// Reads back the earlier records from the JSONL (which has every field at full precision).
std::vector<MetricsLog::Row> MetricsLog::reload(int64_t keep_until_step) const {
  std::vector<Row> rows;
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
      if (r.step >= 0 && r.step <= keep_until_step) rows.push_back(std::move(r));
    }
  }
  return rows;
}

size_t MetricsLog::add_columns(const Metrics& values) {
  size_t added = 0;
  for (const auto& [k, v] : values)
    if (std::find(columns_.begin(), columns_.end(), k) == columns_.end()) {
      columns_.push_back(k);
      ++added;
    }
  return added;
}

void MetricsLog::record(int64_t step, const std::string& split, const Metrics& values) {
  const size_t added = add_columns(values);
  if (jsonl_.is_open()) {
    jsonl_ << to_json(step, split, values) << '\n';
    jsonl_.flush();
  }
  if (csv_path_.empty()) return;
  const std::string line = csv_line({step, split, values});
  if (added == 0) {
    // The usual case: the same columns as before, so the line goes at the end. One write of a
    // whole line; a crash can at worst cut the last line short, as in the JSONL.
    std::ofstream out(csv_path_, std::ios::app | std::ios::binary);
    out << line;
    out.flush();
    if (!out) throw Error(fmt::format("cannot write metrics to '{}'", csv_path_));
    return;
  }
  // A new column (the first evaluation, say): the earlier rows get an empty cell for each new
  // column, which go last, so the file is the old one with a new header and every row widened.
  std::istringstream in(read_file(csv_path_));
  std::string text = csv_header(), row;
  std::getline(in, row);  // the old header
  const std::string empty(added, ',');
  while (std::getline(in, row))
    if (!row.empty()) {
      text += row;
      text += empty;
      text += '\n';
    }
  text += line;
  write_file_atomically(csv_path_, text);
}

std::string MetricsLog::csv_header() const {
  std::string out = "step,split";
  for (const auto& c : columns_) {
    out += ',';
    out += c;
  }
  out += '\n';
  return out;
}

std::string MetricsLog::csv_line(const Row& row) const {
  std::string out = fmt::format("{},{}", row.step, row.split);
  for (const auto& c : columns_) {
    out += ',';
    if (auto it = row.values.find(c); it != row.values.end()) out += number(it->second);
  }
  out += '\n';
  return out;
}

}  // namespace attn::train
