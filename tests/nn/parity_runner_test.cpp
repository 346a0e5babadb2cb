// The engine of `attnlab parity`: outputs and gradients written, and usage errors named.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/safetensors.h"
#include "nn/linear.h"
#include "nn/parity/parity_layers.h"
#include "nn/parity/run_layer_parity.h"
#include "nn/registry/layer_cases.h"

namespace attn::nn {

namespace {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path =
        std::filesystem::temp_directory_path() / ("attn_parity_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

}  // namespace

TEST_SUITE("nn") {
  TEST_CASE("run_layer_parity: linear writes y = x W^T + b and the gradients of sum(y * gy)") {
    TempDir dir;
    Generator gen(1);
    Linear ref(4, 3, true, gen);
    ref.save(dir.file("w.safetensors"));
    const Tensor x = Tensor::randn({2, 5, 4}, gen), gy = Tensor::randn({2, 5, 3}, gen);
    save_safetensors(dir.file("in.safetensors"), {{"x", x}, {"gy", gy}});
    CHECK(run_layer_parity("linear", {{"in_features", "4"}, {"out_features", "3"}},
                           dir.file("w.safetensors"), dir.file("in.safetensors"),
                           dir.file("out.safetensors")) == 0);
    const TensorMap out = load_safetensors(dir.file("out.safetensors")).tensors;
    Var xv(x, true);
    Var y = ref.forward(xv);
    y.backward(gy);
    CHECK(max_abs_diff(out.at("y"), y.value()) < 1e-6);
    CHECK(max_abs_diff(out.at("grad.x"), xv.grad()) < 1e-6);
    CHECK(max_abs_diff(out.at("grad.weight"), ref.weight.grad()) < 1e-5);
    CHECK(max_abs_diff(out.at("grad.bias"), ref.bias.grad()) < 1e-5);
  }

  TEST_CASE("run_layer_parity: usage errors name the layer, key or tensor") {
    TempDir dir;
    Generator gen(2);
    Linear ref(4, 3, true, gen);
    ref.save(dir.file("w.safetensors"));
    const ConfigMap cfg{{"in_features", "4"}, {"out_features", "3"}};
    const Tensor x = Tensor::randn({2, 4}, gen), gy = Tensor::randn({2, 3}, gen);
    save_safetensors(dir.file("ok.safetensors"), {{"x", x}, {"gy", gy}});
    save_safetensors(dir.file("nogy.safetensors"), {{"x", x}});
    save_safetensors(dir.file("nox.safetensors"), {{"gy", gy}});
    save_safetensors(dir.file("extra.safetensors"), {{"x", x}, {"gy", gy}, {"masc", gy}});
    const std::string w = dir.file("w.safetensors"), o = dir.file("o.safetensors");
    auto message = [&](const std::string& layer, const ConfigMap& c, const std::string& weights,
                       const std::string& inputs) -> std::string {
      try {
        run_layer_parity(layer, c, weights, inputs, o);
      } catch (const UsageError& e) {
        return e.what();
      }
      return "no UsageError";
    };
    const std::string ok = dir.file("ok.safetensors");
    CHECK(message("linaer", cfg, w, ok).find("unknown layer 'linaer'") != std::string::npos);
    ConfigMap typo = cfg;
    typo["out_feature"] = "3";
    CHECK(message("linear", typo, w, ok).find("out_feature") != std::string::npos);
    ConfigMap bad = cfg;
    bad["bias"] = "maybe";
    CHECK(message("linear", bad, w, ok).find("bias=maybe") != std::string::npos);
    CHECK(message("linear", cfg, w, dir.file("nogy.safetensors")).find("'gy'") !=
          std::string::npos);
    CHECK(message("linear", cfg, w, dir.file("nox.safetensors")).find("'x'") != std::string::npos);
    CHECK(message("linear", cfg, w, dir.file("extra.safetensors")).find("masc") !=
          std::string::npos);
    ConfigMap wide = cfg;
    wide["out_features"] = "5";
    CHECK(message("linear", wide, w, ok).find("'weight' has shape") != std::string::npos);
    CHECK(message("linear", cfg, dir.file("missing.safetensors"), ok).find("--weights") !=
          std::string::npos);
  }

  TEST_CASE("every layer-table row with gradcheck configs becomes a layer registry row") {
    size_t expected = 0;
    for (const ParityLayerSpec& s : parity_layers()) expected += s.gradcheck_configs.size();
    size_t found = 0;
    for (const LayerCase& c : layer_cases())
      for (const ParityLayerSpec& s : parity_layers())
        if (c.name.rfind(s.name + "/", 0) == 0) ++found;
    CHECK(found >= expected);
    CHECK(find_parity_layer("mha").name == "mha");
    CHECK(parity_layers_help().find("encoder_layer") != std::string::npos);
  }
}

}  // namespace attn::nn
