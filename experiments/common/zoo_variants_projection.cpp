// The projection half of attention-zoo's variants (zoo_variants.h): softmax attention and the
// layers that reshape its score matrix — compress it (Linformer), sparsify it by hashing
// (Reformer), replace it (Synthesizer) or re-index its positions (dual chunk attention).
#include "experiments/common/zoo_variants.h"
#include "experiments/kit/kit.h"
#include "nn/attention/dual_chunk_attention.h"
#include "nn/attention/linformer_attention.h"
#include "nn/attention/lsh_attention.h"
#include "nn/attention/synthesizer_attention.h"

namespace attn::experiments {

namespace {

// Linformer's compressed length k: fixed, so its cost is O(T k) at every T.
constexpr int64_t kLinformerRank = 8;
// Reformer's chunk of the sorted order; a query sees its chunk and the previous one (2 chunk
// keys). The bucket count follows the paper's rule of about one bucket per chunk of the length.
constexpr int64_t kLshChunk = 8;

int64_t lsh_buckets(int64_t max_len) {
  const int64_t per_chunk = (max_len + kLshChunk - 1) / kLshChunk;
  return std::clamp<int64_t>(per_chunk + per_chunk % 2, 2, 32);
}

template <class M, class... Args>
Mixer mixer_of(Args&&... args) {
  auto m = std::make_shared<M>(std::forward<Args>(args)...);
  return {m, [m](const Var& x) { return m->forward(x); }};
}

}  // namespace

std::vector<ZooVariant> zoo_projection_variants() {
  std::vector<ZooVariant> v;
  v.push_back({"softmax", "004 §0x03 (the baseline)",
               "every query scores every key: O(T^2) time and memory", true,
               [](const ZooShape& s, int64_t, Generator& g) {
                 return softmax_mixer(s.d_model, s.nhead, true, g);
               }});
  v.push_back({"linformer", "004 §0x04 4.1 (Linformer)",
               "keys and values compressed along T to k = 8 rows by learned E, F: O(T k)", false,
               [](const ZooShape& s, int64_t, Generator& g) {
                 return mixer_of<nn::LinformerAttention>(s.d_model, s.nhead, s.max_len,
                                                         std::min(kLinformerRank, s.max_len), g);
               }});
  v.push_back({"reformer-lsh", "004 §0x04 4.1 (Reformer)",
               "shared QK hashed by random rotations, attention within sorted chunks: O(T c)", true,
               [](const ZooShape& s, int64_t, Generator& g) {
                 return mixer_of<nn::LshAttention>(s.d_model, s.nhead, lsh_buckets(s.max_len),
                                                   kLshChunk, g, /*causal=*/true);
               }});
  v.push_back({"synthesizer-dense", "004 references (Synthesizer)",
               "each token alone writes its row of scores (2-layer MLP), no q.k", true,
               [](const ZooShape& s, int64_t, Generator& g) {
                 return mixer_of<nn::DenseSynthesizer>(s.d_model, s.nhead, s.max_len, g,
                                                       /*causal=*/true);
               }});
  v.push_back({"synthesizer-random", "004 references (Synthesizer)",
               "a learned T x T score matrix per head, the same for every input", true,
               [](const ZooShape& s, int64_t, Generator& g) {
                 return mixer_of<nn::RandomSynthesizer>(s.d_model, s.nhead, s.max_len, g,
                                                        /*causal=*/true);
               }});
  v.push_back({"dual-chunk", "004 §0x04 4.1 (DCA)",
               "RoPE attention with chunked position indices: distances never beyond training",
               true, [](const ZooShape& s, int64_t, Generator& g) {
                 return mixer_of<nn::RopeAttention>(s.d_model, s.nhead, g,
                                                    std::max<int64_t>(2, s.max_len),
                                                    /*chunk=*/0, nn::RopePositions::kDualChunk);
               }});
  return v;
}

}  // namespace attn::experiments
