// Philox-4x32-10 (kernels/philox.h) and the dropout built on it: the textbook block function
// against the published known answers, the vectorised stream against the textbook function, and
// dropout's keep rate, thread-count independence and regenerated backward mask.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/isa.h"
#include "autograd/kernels/parallel.h"
#include "autograd/kernels/philox.h"

namespace attn {

using kernels::PhiloxBlock;

namespace {

// The dropout output of x under a fresh Generator(seed) at `threads` threads.
Tensor dropped(const Tensor& x, real p, uint64_t seed, int threads) {
  const int before = num_threads();
  set_num_threads(threads);
  Generator gen(seed);
  Tensor y = dropout(Var::constant(x), p, gen, true).value().clone();
  set_num_threads(before);
  return y;
}

// Word i of the stream for `seed`, by the textbook one-block function: lane i % 4 of block i / 4.
uint32_t textbook_word(uint64_t seed, uint64_t i) {
  const uint64_t block = i / 4;
  return kernels::philox4x32_10(
      {static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0, 0},
      kernels::philox_key(seed))[static_cast<size_t>(i % 4)];
}

}  // namespace

TEST_SUITE("autograd") {
  TEST_CASE("Philox-4x32-10 gives Random123's known answers") {
    // The three philox4x32-10 lines of Random123's kat_vectors: counter, key -> output.
    struct Kat {
      PhiloxBlock counter;
      kernels::PhiloxKey key;
      PhiloxBlock expected;
    };
    const Kat kats[] = {
        {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
        {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
         {0xffffffff, 0xffffffff},
         {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
        {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
         {0xa4093822, 0x299f31d0},
         {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
    };
    for (const Kat& k : kats) CHECK(kernels::philox4x32_10(k.counter, k.key) == k.expected);
  }

  TEST_CASE("philox_words (16 blocks in vector lanes) equals the one-block function") {
    const uint64_t seeds[] = {0, 1, 0x299f31d0a4093822ull, ~0ull};
    // Starts that cross the 2^32-block boundary exercise the counter's second word.
    const int64_t starts[] = {0, 4, 1024, 4 * ((int64_t{1} << 32) - 3)};
    const int64_t lengths[] = {1, 3, 64, 65, 130, 1024};
    for (uint64_t seed : seeds)
      for (int64_t first : starts)
        for (int64_t n : lengths) {
          CAPTURE(seed);
          CAPTURE(first);
          CAPTURE(n);
          std::vector<uint32_t> words(static_cast<size_t>(n));
          kernels::philox_words(seed, first, n, words.data());
          int mismatches = 0;
          for (int64_t i = 0; i < n; ++i)
            mismatches += words[static_cast<size_t>(i)] !=
                          textbook_word(seed, static_cast<uint64_t>(first + i));
          CHECK(mismatches == 0);
        }
    uint32_t one;
    CHECK_THROWS_AS(kernels::philox_words(0, 2, 1, &one), Error);  // not a block's start
  }

  TEST_CASE("philox_mask_multiply equals the textbook words' mask, any start, every kernel copy") {
    // Word i decides element i: kept (times scale) when word_i >= threshold. The reference draws
    // each word with the one-block function; every copy the CPU runs must give the same bits.
    const uint32_t threshold = 0x1999999A;  // p = 0.1
    const real scale = 1 / real(0.9);
    Generator data(4);
    const Tensor x = Tensor::randn({300}, data);
    const uint64_t seed = 0x243f6a8885a308d3ull;
    for (kernels::Isa isa : kernels::runnable_isas()) {
      const kernels::KernelTable& k = kernels::kernels_for(isa);
      for (int64_t first : {0, 1, 3, 4, 63, 64, 1001})
        for (int64_t n : {0, 1, 5, 64, 65, 200}) {
          CAPTURE(kernels::isa_name(isa));
          CAPTURE(first);
          CAPTURE(n);
          std::vector<real> out(static_cast<size_t>(n), real(-7));
          k.philox_mask_multiply(seed, threshold, scale, first, n, x.data(), out.data());
          int mismatches = 0;
          for (int64_t j = 0; j < n; ++j) {
            const uint32_t word = textbook_word(seed, static_cast<uint64_t>(first + j));
            const real expected = x.data()[j] * (word < threshold ? real(0) : scale);
            mismatches += out[static_cast<size_t>(j)] != expected;
          }
          CHECK(mismatches == 0);
        }
    }
  }

  TEST_CASE("dropout keeps 1 - p of the elements, in every lane, scaled by 1/(1-p)") {
    const int64_t n = 1 << 20;
    const Tensor x = Tensor::ones({n});
    for (real p : {real(0.1), real(0.5), real(0.9)}) {
      CAPTURE(p);
      const Tensor y = dropped(x, p, 7, 1);
      int64_t kept[4] = {};
      bool values_ok = true;
      for (int64_t i = 0; i < n; ++i) {
        kept[i % 4] += y[i] != 0;
        values_ok = values_ok && (y[i] == 0 || y[i] == 1 / (1 - p));
      }
      CHECK(values_ok);
      // A Bernoulli(1-p) fraction over m draws has standard deviation sqrt(p(1-p)/m): allow 5.
      const double m = static_cast<double>(n / 4);
      const double sd = std::sqrt(static_cast<double>(p) * (1 - p) / m);
      for (int64_t lane : kept) CHECK(std::abs(static_cast<double>(lane) / m - (1 - p)) < 5 * sd);
    }
    const Tensor none = dropped(x, 1, 7, 1);  // p == 1 drops everything
    CHECK(max_abs_diff(none, Tensor::zeros({n})) == 0);
  }

  TEST_CASE("dropout: the same mask at 1 and 2 threads, and another mask for another seed") {
    Generator gen(5);
    const Tensor x = Tensor::randn({3, 200, 333}, gen);  // big enough to split across threads
    const Tensor one = dropped(x, 0.3, 11, 1);
    CHECK(max_abs_diff(one, dropped(x, 0.3, 11, 2)) == 0);
    CHECK(max_abs_diff(one, dropped(x, 0.3, 12, 1)) > 0);
  }

  TEST_CASE("dropout backward regenerates the forward's mask") {
    Generator data(6);
    Var x = Var::parameter(Tensor::randn({5, 1031}, data));
    Generator gen(3);
    Var y = dropout(x, 0.25, gen, true);
    sum(y).backward();
    // dy = 1, so dx is the mask itself: 1/(1-p) where y kept x, 0 where y is 0.
    int mismatches = 0;
    for (int64_t i = 0; i < x.value().numel(); ++i) {
      const real keep = y.value()[i] != 0 ? 1 / real(0.75) : 0;
      mismatches += x.grad()[i] != keep;
    }
    CHECK(mismatches == 0);
  }
}

}  // namespace attn
