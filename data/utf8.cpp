#include "data/utf8.h"

#include <fmt/format.h>

#include <cstdint>

#include "autograd/error.h"

namespace attn::data {

std::vector<std::string> utf8_chars(const std::string& text, const std::string& source) {
  std::vector<std::string> out;
  out.reserve(text.size());
  size_t i = 0;
  auto fail = [&](const char* why) {
    return Error(fmt::format("{}: not valid UTF-8 at byte {}: {}", source, i, why));
  };
  while (i < text.size()) {
    const auto b0 = static_cast<unsigned char>(text[i]);
    // The lead byte says how many bytes follow: 0xxxxxxx (none), 110xxxxx (1), 1110xxxx (2),
    // 11110xxx (3). Each continuation byte is 10xxxxxx.
    int extra = 0;
    uint32_t cp = 0;
    if (b0 < 0x80) {
      cp = b0;
    } else if ((b0 & 0xE0) == 0xC0) {
      extra = 1;
      cp = b0 & 0x1F;
    } else if ((b0 & 0xF0) == 0xE0) {
      extra = 2;
      cp = b0 & 0x0F;
    } else if ((b0 & 0xF8) == 0xF0) {
      extra = 3;
      cp = b0 & 0x07;
    } else {
      throw fail("unexpected continuation or invalid lead byte");
    }
    if (i + static_cast<size_t>(extra) >= text.size() && extra > 0)
      throw fail("the text ends inside a multi-byte character");
    for (int k = 1; k <= extra; ++k) {
      const auto b = static_cast<unsigned char>(text[i + k]);
      if ((b & 0xC0) != 0x80) throw fail("a multi-byte character is cut short");
      cp = (cp << 6) | (b & 0x3F);
    }
    static constexpr uint32_t kMinForLength[4] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMinForLength[extra]) throw fail("overlong encoding");
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) throw fail("not a Unicode scalar value");
    out.push_back(text.substr(i, static_cast<size_t>(extra) + 1));
    i += static_cast<size_t>(extra) + 1;
  }
  return out;
}

}  // namespace attn::data
