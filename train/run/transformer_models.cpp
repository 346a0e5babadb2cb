// The transformer adapters of the train command (transformer, gpt, bert). They wait for the
// full models of nn/transformer/; until then the train command says so clearly.
#include "autograd/error.h"
#include "train/run/task_model.h"

namespace attn::train {

std::unique_ptr<TaskModel> make_transformer_model(const TrainConfig& cfg,
                                                  const data::Task&,
                                                  Generator&) {
  throw UsageError("train: --model " + cfg.model +
                   " is not available yet in this build (the transformer models of nn/transformer/ "
                   "are not finished); use --model lstm, gru or rnn");
}

}  // namespace attn::train
