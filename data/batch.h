// Batching: examples -> padded id tensors and 0/1 masks, for each kind of model.
//
//   using namespace attn::data;
//   Batch b = collate_seq2seq(stream.next(32));
//   // encoder: b.src (B,S), b.src_pad_mask (B,S)
//   // decoder: b.tgt_in (B,T) = BOS y1..yn, b.tgt_out (B,T) = y1..yn EOS, b.causal_mask (T,T)
//   Var loss = cross_entropy(logits, b.tgt_out, kIgnoreIndex);  // pads are skipped
//
// Mask convention (PyTorch's boolean masks): 1 = "do not attend" (a padding key, a future
// position), 0 = allowed. attention code uses masked_fill(scores, mask, -inf). Ids are stored as
// attn::real (exact for ids below 2^24). Targets that should not be scored hold kIgnoreIndex.
// Sequences are padded with PAD to the longest in the batch (or to pad_to when larger).
#pragma once

#include <vector>

#include "autograd/tensor.h"
#include "data/task.h"

namespace attn::data {

struct Batch {
  Tensor src;           // (B,S) input ids, PAD-padded (empty for decoder-only batches)
  Tensor src_pad_mask;  // (B,S) 1 where src is padding
  Tensor tgt_in;        // (B,T) decoder input ids
  Tensor tgt_out;       // (B,T) target id per position, kIgnoreIndex where nothing is scored
  Tensor tgt_pad_mask;  // (B,T) 1 where tgt_in is padding
  Tensor causal_mask;   // (T,T) 1 above the diagonal: position t may not see t' > t
  Tensor labels;        // (B) class ids (classification batches)
  std::vector<int64_t> src_lengths, tgt_lengths;  // real lengths before padding
  int64_t num_target_tokens = 0;                  // scored targets (tokens per step for throughput)
  int64_t batch_size() const { return static_cast<int64_t>(src_lengths.size()); }
};

// Encoder-decoder: src = x (x EOS with src_eos, so the encoder sees where the input ends),
// tgt_in = BOS y, tgt_out = y EOS.
Batch collate_seq2seq(const std::vector<Example>& examples,
                      int64_t pad_to = 0,
                      bool src_eos = false);
// Decoder-only (GPT-style), one sequence BOS x SEP y EOS: tgt_in is all but its last token and
// tgt_out all but its first; only the answer y EOS is scored (the prompt targets are ignored).
// src_lengths holds the prompt length |BOS x SEP| of each row.
Batch collate_decoder_only(const std::vector<Example>& examples, int64_t pad_to = 0);
// Language model windows: tgt_in = src, tgt_out = tgt (every position scored).
Batch collate_language_model(const std::vector<Example>& examples);
// Classification: src = BOS x (BOS acts as the [CLS] slot when with_cls), labels.
Batch collate_classification(const std::vector<Example>& examples, bool with_cls = true);
// n examples drawn from task with gen, in order, collated by collate_classification.
Batch sample_classification(const Task& task, int64_t n, Generator& gen, bool with_cls = true);

// (T,T): 1 where column > row.
Tensor causal_mask(int64_t T);
// (B,L): 1 at positions >= lengths[b].
Tensor padding_mask(const std::vector<int64_t>& lengths, int64_t L);
// (B,L) ids from rows of different lengths, filled with `fill`.
Tensor pad_rows(const std::vector<std::vector<int64_t>>& rows, int64_t L, int64_t fill);

}  // namespace attn::data
