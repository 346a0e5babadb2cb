// The --plugin loader's parts that need no shared library (tests/cli/plugin.sh loads real ones):
// the flag parsing, a missing file, and every built-in mixer of the experiments passing the same
// gradient check a plugin row must pass (so the check's tolerance accepts correct mixers), and
// the checks and all-or-nothing adding of a plugin's feed-forward blocks (rows made in-process).
#include <doctest/doctest.h>

#include <cstdio>
#include <stdexcept>

#include "autograd/error.h"
#include "experiments/common/zoo_variants.h"
#include "experiments/plugin/plugin_loader.h"
#include "nn/feedforward.h"
#include "nn/mixer/mixer_check.h"
#include "nn/mixer/mixer_registry.h"
#include "nn/mixer/plugin.h"

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

namespace {

// The built-in GELU block as a plugin row; `fault` makes it wrong in one way.
enum class Fault { kNone, kThrows, kWrongShape, kWrongGradient };
class GeluBlock final : public nn::FeedForwardBlock {
 public:
  GeluBlock(int64_t d, int64_t d_ff, Generator& g, Fault fault)
      : FeedForwardBlock("GeluBlock"), fault_(fault) {
    if (fault == Fault::kThrows) throw std::invalid_argument("d_ff must be a power of 3");
    ff =
        register_module("ff", std::make_shared<nn::FeedForward>(d, d_ff, nn::Activation::kGELU, g));
  }
  Var forward(const Var& x) const override {
    const Var y = ff->forward(x);
    if (fault_ == Fault::kWrongShape) return sum(y, -1);
    // Scaled by 2 in the forward pass only: the backward misses the factor.
    if (fault_ == Fault::kWrongGradient) return add(y, Var::constant(y.value().clone()));
    return y;
  }
  std::shared_ptr<nn::FeedForward> ff;

 private:
  Fault fault_;
};

nn::PluginRegistry plugin_with(const std::string& name, Fault fault) {
  nn::PluginRegistry r("mine.so");
  r.add_feed_forward({name, "test", "GELU again", [fault](int64_t d, int64_t d_ff, Generator& g) {
                        return std::make_shared<GeluBlock>(d, d_ff, g, fault);
                      }});
  return r;
}

std::string refusal(const nn::PluginRegistry& plugin) {
  try {
    add_plugin_rows(plugin);
  } catch (const PluginGradientError& e) {
    return std::string("gradient: ") + e.what();
  } catch (const UsageError& e) {
    return std::string("usage: ") + e.what();
  }
  return "(loaded)";
}

// Restores the process's registries after a test that loads rows.
struct RegistriesBack {
  nn::MixerRegistry mixers = nn::mixer_registry();
  nn::FeedForwardRegistry blocks = nn::feed_forward_registry();
  ~RegistriesBack() {
    nn::mixer_registry() = mixers;
    nn::feed_forward_registry() = blocks;
  }
};

}  // namespace

TEST_SUITE("experiments") {
  TEST_CASE("a plugin's feed-forward block is checked, then listed with its check") {
    const RegistriesBack back;
    add_plugin_rows(plugin_with("gelu-again", Fault::kNone));
    const nn::FeedForwardRow* row = nn::feed_forward_registry().find("gelu-again");
    REQUIRE(row != nullptr);
    CHECK(row->origin == "mine.so");
    const std::string listing = mixer_list_text();
    CHECK(listing.find("Feed-forward blocks") != std::string::npos);
    CHECK(listing.find("gelu-again") != std::string::npos);
    CHECK(listing.find("passed (worst") != std::string::npos);
  }

  TEST_CASE("a plugin's bad feed-forward block is refused naming the file and the row") {
    const RegistriesBack back;
    CHECK(refusal(plugin_with("GELU", Fault::kNone)) ==
          "usage: --plugin mine.so: feed-forward name 'GELU' is taken (the built-in activation "
          "'gelu'); choose another");
    CHECK(refusal(plugin_with("cube", Fault::kThrows)) ==
          "usage: --plugin mine.so: feed-forward 'cube' threw while being built or run: d_ff "
          "must be a power of 3");
    CHECK(refusal(plugin_with("summed", Fault::kWrongShape)) ==
          "usage: --plugin mine.so: feed-forward 'summed' maps (2,6,8) to (2,6): a layer checked "
          "here returns its input's shape");
    const std::string wrong = refusal(plugin_with("doubled", Fault::kWrongGradient));
    CHECK(wrong.rfind("gradient: --plugin mine.so: feed-forward 'doubled' failed its gradient "
                      "check, so nothing trains it: direction",
                      0) == 0);
    // All of a file's rows or none: its good mixer is not added beside the refused block.
    nn::PluginRegistry both = plugin_with("doubled", Fault::kWrongGradient);
    both.add_mixer(
        {"softmax-again", "test", "", true, [](const nn::MixerShape& s, int64_t, Generator& g) {
           return nn::softmax_mixer(s.d_model, s.nhead, true, g);
         }});
    CHECK(refusal(both).rfind("gradient: ", 0) == 0);
    CHECK(nn::mixer_registry().find("softmax-again") == nullptr);
    CHECK(nn::feed_forward_registry().rows().empty());
    // A second file may not take a loaded block's name.
    add_plugin_rows(plugin_with("gelu-again", Fault::kNone));
    nn::PluginRegistry again("other.so");
    again.add_feed_forward(plugin_with("Gelu-Again", Fault::kNone).feed_forwards()[0]);
    CHECK(refusal(again) ==
          "usage: --plugin other.so: feed-forward name 'Gelu-Again' is taken (feed-forward "
          "'gelu-again', from mine.so); choose another");
  }
}

}  // namespace attn::experiments
