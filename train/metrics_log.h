// Writes the metrics of a run as JSON Lines (one object per record, appended and flushed as it
// happens) and as a CSV table (one line appended per record; rewritten atomically only when a
// record brings a new column). Nothing per record stays in memory, so a run of any length
// holds the same memory for its log (the soak test measured the kept rows and the CSV rebuilt
// from them on every record as part of a slow RSS creep; docs/reliability.md).
//
//   attn::train::MetricsLog log("run/metrics.csv", "run/metrics.jsonl");
//   log.record(100, "train", {{"loss", 0.52}, {"tokens_per_s", 15000}});
//   log.record(100, "eval", {{"exact_match", 0.91}});
//
// CSV columns: step, split, then the union of every metric name seen, in first-seen order;
// a record without a column leaves it empty. Either path may be empty (not written).
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "train/metrics.h"

namespace attn::train {

class MetricsLog {
 public:
  // Throws attn::Error when a file cannot be created. A fresh log (keep_until_step < 0)
  // replaces existing files. On resume from step N pass keep_until_step = N: the records of
  // steps <= N already in the files are kept and later ones (written after the checkpoint,
  // before the interruption) are dropped, so the files read as one uninterrupted run.
  MetricsLog(std::string csv_path, std::string jsonl_path, int64_t keep_until_step = -1);
  void record(int64_t step, const std::string& split, const Metrics& values);

 private:
  struct Row {
    int64_t step;
    std::string split;
    Metrics values;
  };
  std::string csv_path_, jsonl_path_;
  std::ofstream jsonl_;
  std::vector<std::string> columns_;  // the CSV's metric columns, in first-seen order
  // Adds the row's new metric names to columns_; returns how many there were.
  size_t add_columns(const Metrics& values);
  std::string csv_header() const;
  std::string csv_line(const Row& row) const;
  std::vector<Row> reload(int64_t keep_until_step) const;
};

}  // namespace attn::train
