// Writes, for every op registry row, the inputs, an upstream gradient gy, our output y and our
// input gradients to <dir>/<row>.safetensors, plus <dir>/manifest.json describing the rows.
// tests/parity/check_ops.py then recomputes each row in PyTorch and compares.
//
//   attn_parity_dump /tmp/parity && /usr/bin/python3 tests/parity/check_ops.py /tmp/parity
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "autograd/error.h"
#include "autograd/registry/registry.h"
#include "autograd/safetensors.h"

int main(int argc, char** argv) {
  using namespace attn;
  if (argc != 2) {
    fmt::print(stderr, "usage: attn_parity_dump OUT_DIR\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  nlohmann::json manifest = nlohmann::json::array();
  try {
    for (const OpCase& row : op_cases()) {
      Generator gen(20261122);
      std::vector<CaseInput> inputs = row.make_inputs(gen);
      std::vector<Var> vars;
      TensorMap out;
      nlohmann::json spec_inputs = nlohmann::json::array();
      for (const CaseInput& in : inputs) {
        vars.emplace_back(in.value.clone(), in.differentiable);
        out["in." + in.name] = in.value;
        const char* kind = in.kind == InputKind::kFloat   ? "float"
                           : in.kind == InputKind::kIndex ? "index"
                                                          : "mask";
        spec_inputs.push_back({{"name", in.name}, {"kind", kind}, {"grad", in.differentiable}});
      }
      Var y = row.run(vars);
      const Tensor gy = Tensor::randn(y.shape(), gen);
      out["y"] = y.value();
      out["gy"] = gy;
      if (y.requires_grad()) y.backward(gy);
      for (size_t i = 0; i < inputs.size(); ++i)
        if (inputs[i].differentiable && vars[i].has_grad())
          out["grad." + inputs[i].name] = vars[i].grad();
      save_safetensors((dir / (row.name + ".safetensors")).string(), out);
      manifest.push_back({{"name", row.name},
                          {"torch", row.torch},
                          {"inputs", spec_inputs},
                          {"tol", row.parity_tol},
                          {"note", row.parity_note}});
    }
  } catch (const Error& e) {
    fmt::print(stderr, "attn_parity_dump: {}\n", e.what());
    return 1;
  }
  std::ofstream(dir / "manifest.json") << manifest.dump(2) << "\n";
  fmt::print("wrote {} op rows to {}\n", manifest.size(), dir.string());
  return 0;
}
