#include "data/batch.h"

#include <fmt/format.h>

#include <algorithm>

#include "autograd/error.h"

namespace attn::data {

namespace {
void require_nonempty(const std::vector<Example>& examples, const char* fn) {
  if (examples.empty()) throw Error(fmt::format("{}: no examples to batch", fn));
}

int64_t longest(const std::vector<std::vector<int64_t>>& rows, int64_t pad_to) {
  int64_t L = pad_to;
  for (const auto& r : rows) L = std::max(L, static_cast<int64_t>(r.size()));
  return L;
}

std::vector<int64_t> lengths_of(const std::vector<std::vector<int64_t>>& rows) {
  std::vector<int64_t> out;
  for (const auto& r : rows) out.push_back(static_cast<int64_t>(r.size()));
  return out;
}

int64_t count_scored(const Tensor& tgt_out) {
  int64_t n = 0;
  for (int64_t i = 0; i < tgt_out.numel(); ++i) n += tgt_out[i] != kIgnoreIndex;
  return n;
}

// Fills the decoder side of a batch from input rows and target rows (same lengths).
void set_decoder(Batch& b,
                 const std::vector<std::vector<int64_t>>& in,
                 const std::vector<std::vector<int64_t>>& out,
                 int64_t pad_to) {
  const int64_t T = longest(in, pad_to);
  b.tgt_lengths = lengths_of(in);
  b.tgt_in = pad_rows(in, T, kPad);
  b.tgt_out = pad_rows(out, T, kIgnoreIndex);
  b.tgt_pad_mask = padding_mask(b.tgt_lengths, T);
  b.causal_mask = causal_mask(T);
  b.num_target_tokens = count_scored(b.tgt_out);
}

void set_encoder(Batch& b, const std::vector<std::vector<int64_t>>& src, int64_t pad_to) {
  const int64_t S = longest(src, pad_to);
  b.src_lengths = lengths_of(src);
  b.src = pad_rows(src, S, kPad);
  b.src_pad_mask = padding_mask(b.src_lengths, S);
}
}  // namespace

Tensor pad_rows(const std::vector<std::vector<int64_t>>& rows, int64_t L, int64_t fill) {
  Tensor t = Tensor::full({static_cast<int64_t>(rows.size()), L}, static_cast<real>(fill));
  for (size_t b = 0; b < rows.size(); ++b) {
    if (static_cast<int64_t>(rows[b].size()) > L)
      throw Error(fmt::format("pad_rows: row {} has {} tokens, more than the padded length {}", b,
                              rows[b].size(), L));
    for (size_t i = 0; i < rows[b].size(); ++i)
      t.data()[static_cast<int64_t>(b) * L + static_cast<int64_t>(i)] =
          static_cast<real>(rows[b][i]);
  }
  return t;
}

Tensor causal_mask(int64_t T) {
  Tensor m = Tensor::zeros({T, T});
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = i + 1; j < T; ++j) m.data()[i * T + j] = 1;
  return m;
}

Tensor padding_mask(const std::vector<int64_t>& lengths, int64_t L) {
  Tensor m = Tensor::zeros({static_cast<int64_t>(lengths.size()), L});
  for (size_t b = 0; b < lengths.size(); ++b)
    for (int64_t t = lengths[b]; t < L; ++t) m.data()[static_cast<int64_t>(b) * L + t] = 1;
  return m;
}

Batch collate_seq2seq(const std::vector<Example>& examples, int64_t pad_to, bool src_eos) {
  require_nonempty(examples, "collate_seq2seq");
  std::vector<std::vector<int64_t>> src, in, out;
  for (const auto& ex : examples) {
    src.push_back(ex.src);
    if (src_eos) src.back().push_back(kEos);
    in.push_back({kBos});
    in.back().insert(in.back().end(), ex.tgt.begin(), ex.tgt.end());
    out.push_back(ex.tgt);
    out.back().push_back(kEos);
  }
  Batch b;
  set_encoder(b, src, pad_to);
  set_decoder(b, in, out, pad_to);
  return b;
}

Batch collate_decoder_only(const std::vector<Example>& examples, int64_t pad_to) {
  require_nonempty(examples, "collate_decoder_only");
  std::vector<std::vector<int64_t>> in, out;
  Batch b;
  for (const auto& ex : examples) {
    std::vector<int64_t> seq{kBos};
    seq.insert(seq.end(), ex.src.begin(), ex.src.end());
    seq.push_back(kSep);
    const auto prompt = static_cast<int64_t>(seq.size());
    seq.insert(seq.end(), ex.tgt.begin(), ex.tgt.end());
    seq.push_back(kEos);
    in.emplace_back(seq.begin(), seq.end() - 1);
    out.emplace_back(seq.begin() + 1, seq.end());
    // out[t] predicts seq[t + 1]; the prompt's own tokens (t + 1 < prompt) are not scored.
    std::fill(out.back().begin(), out.back().begin() + (prompt - 1), kIgnoreIndex);
    b.src_lengths.push_back(prompt);
  }
  set_decoder(b, in, out, pad_to);
  return b;
}

Batch collate_language_model(const std::vector<Example>& examples) {
  require_nonempty(examples, "collate_language_model");
  std::vector<std::vector<int64_t>> in, out;
  for (const auto& ex : examples) {
    if (ex.src.size() != ex.tgt.size())
      throw Error("collate_language_model: an example's src and tgt differ in length");
    in.push_back(ex.src);
    out.push_back(ex.tgt);
  }
  Batch b;
  b.src_lengths = lengths_of(in);
  set_decoder(b, in, out, 0);
  return b;
}

Batch collate_classification(const std::vector<Example>& examples, bool with_cls) {
  require_nonempty(examples, "collate_classification");
  std::vector<std::vector<int64_t>> src;
  Batch b;
  b.labels = Tensor::zeros({static_cast<int64_t>(examples.size())});
  for (size_t i = 0; i < examples.size(); ++i) {
    const auto& ex = examples[i];
    if (ex.label < 0) throw Error("collate_classification: an example has no label");
    src.push_back(with_cls ? std::vector<int64_t>{kBos} : std::vector<int64_t>{});
    src.back().insert(src.back().end(), ex.src.begin(), ex.src.end());
    b.labels[static_cast<int64_t>(i)] = static_cast<real>(ex.label);
  }
  set_encoder(b, src, 0);
  b.num_target_tokens = static_cast<int64_t>(examples.size());
  return b;
}

Batch sample_classification(const Task& task, int64_t n, Generator& gen, bool with_cls) {
  std::vector<Example> xs;
  xs.reserve(static_cast<size_t>(std::max<int64_t>(n, 0)));
  for (int64_t i = 0; i < n; ++i) xs.push_back(task.sample(gen));
  return collate_classification(xs, with_cls);
}

}  // namespace attn::data
