// MetricsLog: the CSV is appended one line per record and rewritten only when a new column
// arrives, with the same text as a table built from every row at the end.
#include <doctest/doctest.h>

#include <string>

#include "autograd/safetensors.h"
#include "tests/scratch_dir.h"
#include "train/metrics_log.h"

namespace attn::train {

TEST_SUITE("train") {
  TEST_CASE("the metrics CSV grows by lines and widens earlier rows when a column is new") {
    const std::string dir = attn::testing::scratch_dir("metrics_log").string();
    const std::string csv = dir + "/m.csv", jsonl = dir + "/m.jsonl";
    {
      MetricsLog log(csv, jsonl);
      CHECK(read_file(csv) == "step,split\n");
      log.record(5, "train", {{"loss", 2.5}});
      log.record(10, "train", {{"loss", 1.5}});
      CHECK(read_file(csv) == "step,split,loss\n5,train,2.5\n10,train,1.5\n");
      log.record(10, "eval", {{"acc", 0.25}});  // a new column: every earlier row gets a cell
      log.record(15, "train", {{"loss", 0.5}, {"lr", 0.01}});
      CHECK(read_file(csv) ==
            "step,split,loss,acc,lr\n5,train,2.5,,\n10,train,1.5,,\n10,eval,,0.25,\n"
            "15,train,0.5,,0.01\n");
    }
    // Resuming from step 10 keeps the rows up to it (from the JSONL) and drops the later one.
    MetricsLog resumed(csv, jsonl, 10);
    CHECK(read_file(csv) == "step,split,loss,acc\n5,train,2.5,\n10,train,1.5,\n10,eval,,0.25\n");
    resumed.record(15, "train", {{"loss", 0.75}});
    CHECK(read_file(csv) ==
          "step,split,loss,acc\n5,train,2.5,\n10,train,1.5,\n10,eval,,0.25\n15,train,0.75,\n");
  }
}

}  // namespace attn::train
