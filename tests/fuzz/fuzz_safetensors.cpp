// libFuzzer harness: decode_safetensors on arbitrary bytes (what `attnlab parity --weights` and
// every checkpoint load read first).
//
//   scripts/fuzz safetensors 600        # ten minutes, corpus in tests/fuzz/corpus/safetensors
//
// The contract checked: any input either decodes or throws attn::Error. Any other exception,
// a crash, a sanitizer report or a timeout is a bug. A file that decodes must survive a round
// trip: encode what was read, decode it again, and get the same names, shapes and bits.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "autograd/error.h"
#include "autograd/safetensors.h"

namespace {

void check_round_trip(const attn::SafetensorsFile& f) {
  const attn::SafetensorsFile g = attn::decode_safetensors(
      attn::encode_safetensors(
          f.tensors, f.metadata,
          sizeof(attn::real) == 4 ? attn::SaveDtype::kF32 : attn::SaveDtype::kF64),
      "round trip");
  bool same = g.metadata == f.metadata && g.tensors.size() == f.tensors.size();
  for (auto a = f.tensors.begin(), b = g.tensors.begin(); same && a != f.tensors.end(); ++a, ++b)
    same = a->first == b->first && a->second.shape() == b->second.shape() &&
           std::memcmp(a->second.data(), b->second.data(),
                       static_cast<size_t>(a->second.numel()) * sizeof(attn::real)) == 0;
  if (!same) {
    std::fprintf(stderr, "fuzz_safetensors: a decoded file does not survive encode + decode\n");
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  attn::SafetensorsFile f;
  try {
    f = attn::decode_safetensors(bytes, "fuzz input");
  } catch (const attn::Error&) {
    return 0;  // rejected with a message: the expected outcome for most inputs
  }
  check_round_trip(f);
  return 0;
}
