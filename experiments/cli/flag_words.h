// The words of the commands with a fixed set of flags (`attnlab claims`, `attnlab run --all`):
// --flag, --flag value and --flag=value; anything else is a UsageError naming the closest flag.
//
//   FlagWords w = read_flag_words(args, "attnlab claims", {"runs", "threads"}, {"quick"});
//   if (w.has("quick")) ...;   fs::path runs = w.value("runs");   // "" when not given
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "autograd/error.h"
#include "train/options/suggest.h"

namespace attn::experiments {

struct FlagWords {
  std::map<std::string, std::string> flags;  // name (no dashes) -> value ("" for switches)
  std::vector<std::string> positional;       // words that are no flag, in order

  bool has(const std::string& name) const { return flags.count(name) > 0; }
  std::string value(const std::string& name) const {
    const auto it = flags.find(name);
    return it == flags.end() ? "" : it->second;
  }
};

inline FlagWords read_flag_words(const std::vector<std::string>& args,
                                 const std::string& command,
                                 const std::vector<std::string>& with_value,
                                 const std::vector<std::string>& switches) {
  auto known = [](const std::vector<std::string>& names, const std::string& n) {
    return std::find(names.begin(), names.end(), n) != names.end();
  };
  FlagWords w;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h") {
      w.flags["help"] = "";
      continue;
    }
    if (a.size() <= 2 || a.rfind("--", 0) != 0) {
      w.positional.push_back(a);
      continue;
    }
    std::string name = a.substr(2), value;
    const size_t eq = name.find('=');
    if (eq != std::string::npos) value = name.substr(eq + 1), name.resize(eq);
    if (known(switches, name)) {
      if (eq != std::string::npos) throw UsageError(command + ": --" + name + " takes no value");
    } else if (known(with_value, name)) {
      if (eq == std::string::npos) {
        if (i + 1 >= args.size() || args[i + 1].rfind("--", 0) == 0)
          throw UsageError(command + ": --" + name + " needs a value");
        value = args[++i];
      }
      if (value.empty()) throw UsageError(command + ": --" + name + " needs a value");
    } else {
      std::vector<std::string> all = with_value;
      all.insert(all.end(), switches.begin(), switches.end());
      throw UsageError(command + ": unknown option --" + name + "." +
                       train::options::did_you_mean(name, all, "--"));
    }
    w.flags[name] = value;
  }
  return w;
}

}  // namespace attn::experiments
