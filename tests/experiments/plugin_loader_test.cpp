// The --plugin loader's parts that need no shared library (tests/cli/plugin.sh loads real ones):
// the flag parsing, a missing file, and every built-in mixer of the experiments passing the same
// gradient check a plugin row must pass (so the check's tolerance accepts correct mixers).
#include <doctest/doctest.h>

#include <cstdio>

#include "autograd/error.h"
#include "experiments/common/zoo_variants.h"
#include "experiments/plugin/plugin_loader.h"
#include "nn/mixer/mixer_check.h"
#include "nn/mixer/mixer_registry.h"

namespace attn::experiments {

TEST_SUITE("experiments") {
  TEST_CASE("--plugin flags are taken out of the arguments, in order") {
    std::vector<std::string> args{"run",  "attention-zoo", "--plugin",
                                  "a.so", "--quick",       "--plugin=b.so"};
    CHECK(take_plugin_flags(args) == std::vector<std::string>{"a.so", "b.so"});
    CHECK(args == std::vector<std::string>{"run", "attention-zoo", "--quick"});
    std::vector<std::string> dangling{"list", "--plugin"};
    CHECK_THROWS_AS(take_plugin_flags(dangling), UsageError);
    std::vector<std::string> empty{"list", "--plugin="};
    CHECK_THROWS_AS(take_plugin_flags(empty), UsageError);
  }

  TEST_CASE("a missing plugin file is a usage error naming it") {
    try {
      load_plugins({"/nonexistent/mine.so"});
      FAIL("loaded a missing file");
    } catch (const UsageError& e) {
      CHECK(std::string(e.what()) == "--plugin /nonexistent/mine.so: no such file");
    }
  }

  TEST_CASE("every built-in mixer passes the plugin gradient check") {
    register_builtin_mixers();
    register_builtin_mixers();  // once only: a second call adds nothing
    int n = 0;
    for (const nn::MixerRow& row : nn::mixer_registry().rows()) {
      const nn::MixerCheck c = nn::check_mixer_gradient(row);
      std::printf("  %-20s worst |a - n| / tolerance = %.4f\n", row.name.c_str(), c.worst_ratio);
      CHECK_MESSAGE(c.ok, row.name << ": " << c.detail);
      ++n;
    }
    CHECK(n >= 12);
  }

  TEST_CASE("every zoo member is a registry row, so `train --model mixer --mixer` can name it") {
    register_builtin_mixers();
    std::vector<ZooVariant> zoo = zoo_projection_variants();
    for (ZooVariant& v : zoo_recurrent_variants()) zoo.push_back(std::move(v));
    for (ZooVariant& v : zoo_linear_variants()) zoo.push_back(std::move(v));
    for (const ZooVariant& v : zoo) {
      const nn::MixerRow* row = nn::mixer_registry().find(v.name);
      REQUIRE_MESSAGE(row != nullptr, v.name);
      CHECK_MESSAGE(row->origin.empty(), v.name);
      CHECK_MESSAGE(row->causal == v.causal, v.name);
    }
  }
}

}  // namespace attn::experiments
