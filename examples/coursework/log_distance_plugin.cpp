// A positional scheme as a plugin: a fixed score bias b(h, i, j) = -c_h log(1 + i - j), added to
// head h's score of query i for key j <= i. exp(b) = (1 + i - j)^(-c_h): attention to a key falls
// as a power of its distance, where ALiBi's -slope_h (i - j) makes it fall exponentially (the
// log form is KERPLE's, with its two trained parameters fixed here). Heads get c_h = 2^(2 - 4h/H)
// (4, 2, 1, 0.5 for H = 4): from sharply local to broad, as ALiBi spreads its slopes.
//
//   attnlab list --plugin build/liblog_distance.so             # the row, its values checked
//   attnlab run length-extrapolation --plugin build/liblog_distance.so \
//       --variants log-distance,alibi,rope                     # trained short, read long
//
// No parameters, so nothing to gradient-check: the loader checks that every value is finite.
#include <cmath>
#include <cstdint>

#include <attnlab/nn/mixer/plugin.h>

ATTN_PLUGIN(coursework_log_distance) {
  registry.add_score_bias(
      {.name = "log-distance",
       .source = "coursework (KERPLE's log bias, fixed)",
       .idea = "-c_h log(1 + i - j): attention falls as a power of the distance",
       .bias = [](int64_t head, int64_t nhead, int64_t query, int64_t key) {
         const double c = std::exp2(2.0 - 4.0 * static_cast<double>(head) / nhead);
         return -c * std::log1p(static_cast<double>(query - key));
       }});
}
