// The train command end to end on tiny models: every model family on every kind of task, the
// run folder, and a resumed run that continues bit-identically.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "autograd/error.h"
#include "autograd/safetensors.h"
#include "data/stream.h"
#include "tests/error_message.h"
#include "tests/scratch_dir.h"
#include "train/checkpoint.h"
#include "train/optim/adam.h"
#include "train/run/run_train.h"
#include "train/run/task_model.h"
#include "train/run/task_setup.h"

namespace attn::train {

namespace {
std::string run_dir(const std::string& name) {
  auto dir = attn::testing::scratch_root() / "run" / name;
  std::filesystem::remove_all(dir);
  return dir.string();
}

// A model small enough that a step takes a millisecond or two.
TrainConfig tiny(const std::string& task, const std::string& model, const std::string& out) {
  TrainConfig c;
  c.task = task;
  c.model = model;
  c.d_model = 16;
  c.nhead = 2;
  c.num_layers = 1;
  c.dim_ff = 32;
  c.hidden = 16;
  c.batch_size = 8;
  c.steps = 4;
  c.eval_size = 12;
  c.eval_every = 2;
  c.min_len = 2;
  c.max_len = 5;
  c.eval_min_len = 3;
  c.eval_max_len = 6;
  c.seq_len = 16;
  c.block_len = 12;
  c.warmup = 2;
  c.checkpoint_every = 2;
  c.progress = "off";
  c.out = out;
  return c;
}

// Runs train_task with its printed lines going nowhere.
TrainSummary quiet(const TrainConfig& c) {
  std::FILE* devnull = std::fopen("/dev/null", "w");
  try {
    TrainSummary s = train_task(c, devnull);
    std::fclose(devnull);
    return s;
  } catch (...) {
    std::fclose(devnull);
    throw;
  }
}

// Rewrites the run's checkpoint (same weights, optimizer, generators, data position) with
// `extra` as its extra metadata instead of what train_task stored.
void rewrite_checkpoint_extra(const TrainConfig& c,
                              const std::string& path,
                              const Metadata& extra) {
  const TaskSetup setup = make_task_setup(c);
  const SequenceLimits limits{std::max(setup.train->max_src_len(), setup.heldout->max_src_len()),
                              std::max(setup.train->max_tgt_len(), setup.heldout->max_tgt_len())};
  Generator init(init_seed(c));
  const auto model = make_task_model(c, *setup.train, limits, init);
  data::ExampleStream stream(setup.train, stream_seed(c));
  AdamW opt(model->module().parameters(), {.lr = c.lr, .weight_decay = c.weight_decay});
  TrainingState st{.model = &model->module(),
                   .optimizer = &opt,
                   .generators = model->generators(),
                   .stream = &stream};
  const CheckpointInfo info = load_checkpoint(path, st);
  save_checkpoint(path, st, info.step, extra);
}

std::vector<double> train_losses(const std::string& jsonl) {
  std::vector<double> out;
  std::istringstream in(read_file(jsonl));
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j["split"] == "train") out.push_back(j["loss"].get<double>());
  }
  return out;
}
}  // namespace

TEST_SUITE("train") {
  TEST_CASE("every model family trains on every kind of task and writes the run folder") {
    const std::vector<std::pair<std::string, std::vector<std::string>>> runs{
        {"reversal", {"transformer", "gpt", "lstm"}},
        {"anagram", {"bert", "transformer", "gru"}},
        {"charlm", {"gpt", "bert", "rnn"}}};
    for (const auto& task_models : runs)
      for (const auto& model : task_models.second) {
        const std::string& task =
            task_models.first;  // not a binding: CAPTURE is a lambda (clang 14)
        CAPTURE(task);
        CAPTURE(model);
        const std::string dir = run_dir(task + "-" + model);
        const TrainSummary s = quiet(tiny(task, model, dir));
        CHECK(s.result.last_step == 4);
        CHECK(s.result.losses.size() == 4);
        for (const char* f : {"config.json", "metrics.csv", "metrics.jsonl", "results.json",
                              "checkpoint.safetensors"})
          CHECK(std::filesystem::exists(std::filesystem::path(dir) / f));
        const auto results = nlohmann::json::parse(read_file(dir + "/results.json"));
        CHECK(results["final_eval"].contains(s.main_metric));
        if (task == "reversal") {
          CHECK(s.main_metric == "exact_match");
          CHECK(s.exact_match_by_length.begin()->first >= 3);  // held-out lengths 3..6
          CHECK(s.exact_match_by_length.rbegin()->first <= 6);
          CHECK(std::filesystem::exists(std::filesystem::path(dir) / "samples.txt"));
        }
        if (task == "charlm") CHECK(s.final_eval.at("perplexity") > 1.0);
      }
  }

  TEST_CASE("a resumed run continues bit-identically: same losses, same final weights") {
    const std::string straight = run_dir("straight"), split = run_dir("split");
    TrainConfig a = tiny("reversal", "transformer", straight);
    a.schedule = "warmup";  // its curve does not depend on the step budget, which grows here
    a.steps = 8;
    a.dropout = 0.1;  // the dropout generator must travel with the checkpoint too
    a.checkpoint_every = 4;
    quiet(a);
    TrainConfig b = a;
    b.out = split;
    b.steps = 4;
    quiet(b);
    TrainConfig c = a;
    c.out = "";
    c.resume = split + "/checkpoint.safetensors";
    const TrainSummary resumed = quiet(c);
    CHECK(resumed.start_step == 4);
    CHECK(resumed.run_dir == split);
    CHECK(train_losses(straight + "/metrics.jsonl") == train_losses(split + "/metrics.jsonl"));
    const TensorMap x = load_safetensors(straight + "/checkpoint.safetensors").tensors;
    const TensorMap y = load_safetensors(split + "/checkpoint.safetensors").tensors;
    REQUIRE(x.size() == y.size());
    for (const auto& entry : x) {
      const std::string& name = entry.first;  // not a binding: CAPTURE is a lambda (clang 14)
      CAPTURE(name);
      CHECK(entry.second.to_vector() == y.at(name).to_vector());
    }
  }

  TEST_CASE("re-running into a finished run's folder is refused and changes nothing") {
    const std::string dir = run_dir("again");
    const TrainConfig a = tiny("reversal", "lstm", dir);
    quiet(a);
    const std::string ckpt = read_file(dir + "/checkpoint.safetensors");
    const std::string metrics = read_file(dir + "/metrics.jsonl");
    CHECK_THROWS_WITH_AS(quiet(a), doctest::Contains("already holds a run"), UsageError);
    CHECK(read_file(dir + "/checkpoint.safetensors") == ckpt);
    CHECK(read_file(dir + "/metrics.jsonl") == metrics);
  }

  TEST_CASE("resume: a bad or missing stored configuration is refused naming file and field") {
    const std::string dir = run_dir("stored-config");
    const std::string ckpt = dir + "/checkpoint.safetensors";
    TrainConfig a = tiny("reversal", "lstm", dir);
    a.schedule = "warmup";
    quiet(a);
    const std::string stored = load_safetensors(ckpt).metadata.at("extra.config");
    TrainConfig b = a;
    b.resume = ckpt;
    b.steps = 6;

    rewrite_checkpoint_extra(a, ckpt, {{"config", "{\"lr\": "}});
    std::string msg = testing::error_of([&] { quiet(b); });
    INFO(msg);
    CHECK(msg.find("'" + ckpt + "'") != std::string::npos);
    CHECK(msg.find("stored configuration (metadata 'extra.config') is not valid JSON") !=
          std::string::npos);

    nlohmann::json wrong_type = nlohmann::json::parse(stored);
    wrong_type["lr"] = 0.003;  // a number where attnlab stores text
    rewrite_checkpoint_extra(a, ckpt, {{"config", wrong_type.dump()}});
    msg = testing::error_of([&] { quiet(b); });
    CHECK(msg.find("'" + ckpt + "'") != std::string::npos);
    CHECK(msg.find("the value 0.003 for the field 'lr'") != std::string::npos);

    rewrite_checkpoint_extra(a, ckpt, {});  // no stored configuration at all
    msg = testing::error_of([&] { quiet(b); });
    CHECK(msg.find("'" + ckpt + "'") != std::string::npos);
    CHECK(msg.find("stores no training configuration") != std::string::npos);

    rewrite_checkpoint_extra(a, ckpt, {{"config", stored}});  // the original: resumes
    CHECK(quiet(b).start_step == 4);
  }

  TEST_CASE("resuming with a different configuration is refused before training") {
    const std::string dir = run_dir("mismatch");
    TrainConfig a = tiny("reversal", "lstm", dir);
    quiet(a);
    TrainConfig b = a;
    b.resume = dir + "/checkpoint.safetensors";
    b.steps = 8;
    b.lr = 0.002;
    CHECK_THROWS_WITH_AS(
        quiet(b), doctest::Contains("--lr is 0.003 in the checkpoint but 0.002 now"), UsageError);
    b.lr = a.lr;  // a longer budget changes the cosine schedule's curve: refused as well
    CHECK_THROWS_WITH_AS(quiet(b), doctest::Contains("--steps is 4 in the checkpoint but 8 now"),
                         UsageError);
    b.hidden = 24;  // the stored options are compared before any tensor is loaded
    CHECK_THROWS_WITH_AS(quiet(b), doctest::Contains("--hidden is 16 in the checkpoint but 24 now"),
                         UsageError);
    b.hidden = a.hidden;
    b.steps = 4;
    CHECK_THROWS_WITH_AS(quiet(b), doctest::Contains("raise --steps"), UsageError);
  }

  TEST_CASE(
      "resume: --positional auto continues the stored scheme; an older checkpoint without "
      "the field counts as the model's own") {
    auto stored_positional = [](const std::string& ckpt) {
      return nlohmann::json::parse(load_safetensors(ckpt).metadata.at("extra.config"))
          .at("positional")
          .get<std::string>();
    };
    const std::string dir = run_dir("positional");
    TrainConfig a = tiny("reversal", "transformer", dir);
    a.schedule = "warmup";
    a.positional = "t5_bias";
    quiet(a);
    CHECK(stored_positional(dir + "/checkpoint.safetensors") == "t5_bias");
    TrainConfig b = a;
    b.resume = dir + "/checkpoint.safetensors";
    b.steps = 6;
    b.positional = "auto";  // read back from the checkpoint
    CHECK(quiet(b).start_step == 4);
    CHECK(stored_positional(b.resume) == "t5_bias");

    // A checkpoint written before --positional existed: no field, the model's own scheme.
    const std::string old_dir = run_dir("positional-old");
    const std::string ckpt = old_dir + "/checkpoint.safetensors";
    TrainConfig c = tiny("reversal", "transformer", old_dir);
    c.schedule = "warmup";
    quiet(c);
    CHECK(stored_positional(ckpt) == "sinusoidal");  // auto, resolved
    nlohmann::json config =
        nlohmann::json::parse(load_safetensors(ckpt).metadata.at("extra.config"));
    config.erase("positional");
    rewrite_checkpoint_extra(c, ckpt, {{"config", config.dump()}});
    TrainConfig d = c;
    d.resume = ckpt;
    d.steps = 6;
    d.positional = "rope";
    CHECK_THROWS_WITH_AS(
        quiet(d), doctest::Contains("--positional is sinusoidal in the checkpoint but rope now"),
        UsageError);
    d.positional = "auto";
    CHECK(quiet(d).start_step == 4);
  }

  TEST_CASE(
      "resume: an older checkpoint without the block ablation fields had the whole block; a "
      "changed switch is refused") {
    const std::string dir = run_dir("ablation-old");
    const std::string ckpt = dir + "/checkpoint.safetensors";
    TrainConfig c = tiny("reversal", "transformer", dir);
    c.schedule = "warmup";
    quiet(c);
    nlohmann::json config =
        nlohmann::json::parse(load_safetensors(ckpt).metadata.at("extra.config"));
    for (const char* part : {"layer_norm", "residual", "feedforward"}) {
      CHECK(config.at(part) == "true");
      config.erase(part);
    }
    rewrite_checkpoint_extra(c, ckpt, {{"config", config.dump()}});
    TrainConfig d = c;
    d.resume = ckpt;
    d.steps = 6;
    d.residual = false;
    CHECK_THROWS_WITH_AS(quiet(d),
                         doctest::Contains("--residual is true in the checkpoint but false now"),
                         UsageError);
    d.residual = true;
    CHECK(quiet(d).start_step == 4);
  }
}

}  // namespace attn::train
