#include "train/run/task_setup.h"

#include <algorithm>

#include "autograd/error.h"
#include "data/corpus.h"
#include "data/stream.h"
#include "data/tasks/anagram.h"
#include "data/tasks/long_range.h"
#include "data/tasks/recall.h"
#include "data/tasks/sequence.h"

namespace attn::train {

uint64_t init_seed(const TrainConfig& cfg) {
  return cfg.seed;
}
uint64_t stream_seed(const TrainConfig& cfg) {
  return cfg.seed * 1000 + 1;
}
uint64_t heldout_seed(const TrainConfig& cfg) {
  return cfg.seed * 1000 + 2;
}

namespace {

std::shared_ptr<const data::Task> sequence_task(const TrainConfig& c, bool heldout) {
  const data::SequenceOp op = c.task == "reversal" ? data::SequenceOp::kReverse
                              : c.task == "copy"   ? data::SequenceOp::kCopy
                                                   : data::SequenceOp::kSort;
  return std::make_shared<data::SequenceTask>(
      data::SequenceTask::Config{.op = op,
                                 .min_len = heldout ? c.eval_min_len : c.min_len,
                                 .max_len = heldout ? c.eval_max_len : c.max_len,
                                 .alphabet = c.alphabet});
}

TaskSetup build(const TrainConfig& c) {
  TaskSetup s;
  s.main_metric = "exact_match";
  if (c.task == "reversal" || c.task == "copy" || c.task == "sort") {
    s.train = sequence_task(c, false);
    s.heldout = sequence_task(c, true);
  } else if (c.task == "recall") {
    s.train = s.heldout =
        std::make_shared<data::RecallTask>(data::RecallTask::Config{.num_pairs = c.num_pairs});
  } else if (c.task == "khop") {
    s.train = s.heldout = std::make_shared<data::KHopTask>(
        data::KHopTask::Config{.num_nodes = c.num_pairs, .hops = c.hops});
  } else if (c.task == "anagram") {
    s.train = s.heldout = std::make_shared<data::AnagramTask>(data::AnagramTask::Config{});
    s.main_metric = "accuracy";
  } else if (c.task == "longrange") {
    s.train = s.heldout = std::make_shared<data::LongRangeTask>(data::LongRangeTask::Config{
        .mode = c.longrange_mode == "majority" ? data::LongRangeMode::kMajority
                                               : data::LongRangeMode::kMatch,
        .seq_len = c.seq_len,
        .alphabet = c.alphabet});
    s.main_metric = "accuracy";
  } else if (c.task == "charlm") {
    const std::string text =
        c.text_file.empty() ? data::toy_grammar_text(4000, 7) : data::load_text_file(c.text_file);
    const data::CharCorpus corpus(text, 0.1);
    s.train = std::make_shared<data::LanguageModelTask>(corpus, c.block_len, data::Split::kTrain);
    auto val =
        std::make_shared<data::LanguageModelTask>(corpus, c.block_len, data::Split::kValidation);
    s.heldout = val;
    s.heldout_set = val->all_windows();
    if (static_cast<int64_t>(s.heldout_set.size()) > c.eval_size)
      s.heldout_set.resize(static_cast<size_t>(c.eval_size));
    s.main_metric = "perplexity";
    s.lower_is_better = true;
    return s;
  } else {
    throw UsageError("train: unknown task '" + c.task + "'");
  }
  s.heldout_set = data::make_heldout(*s.heldout, c.eval_size, heldout_seed(c));
  return s;
}

}  // namespace

TaskSetup make_task_setup(const TrainConfig& cfg) {
  try {
    return build(cfg);
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError(std::string("train: ") + e.what());
  }
}

}  // namespace attn::train
