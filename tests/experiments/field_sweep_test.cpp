// Every field of every experiment given bad values by its type, through resolve_config (what
// `attnlab run NAME --field VALUE` does with the command line before anything runs): each must
// be refused with attn::UsageError naming the field. Values that only a field's range can refuse
// (zero, -1, 1e308) must be refused the same way or accepted: a seed of 0, a window of 0 for
// "none". tests/cli/bad_inputs.sh runs the same values end to end (exit code 2, the message,
// nothing written) for one field of each type per experiment: the path from the command line to
// the refusal is the same for every field, and this sweep covers every field's own declaration
// (its type, its range, its choices) in one process instead of a few thousand.
//
//   build/release/attn_tests -tc="*every field*"
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "autograd/error.h"
#include "experiments/cli/commands.h"
#include "experiments/registry.h"

namespace attn::experiments {

namespace {

using train::options::Field;
using train::options::FieldType;

// The values no field of TYPE may take, and the ones only its range decides.
struct BadValues {
  std::vector<std::string> always, by_range;
};

BadValues bad_values_for(const Field& f) {
  switch (f.type) {
    case FieldType::kInt:
      return {{"abc", "2.5", "99999999999999999999"}, {"0", "-1"}};
    case FieldType::kReal:
      return {{"abc", "1e999"}, {"0", "-1", "1e308"}};
    case FieldType::kBool:
      return {{"maybe"}, {}};
    case FieldType::kIntList:
    case FieldType::kRealList:
      return {{"1,abc", ""}, {"0", "-1"}};
    case FieldType::kString:
      if (f.choices.empty()) return {};  // any text may be valid
      return {{"no-such-choice"}, {}};
  }
  return {};
}

// The message resolve_config gives for --FIELD VALUE, or "" when the value is accepted.
std::string refusal(const Experiment& e, const std::string& field, const std::string& value) {
  RunRequest request;
  request.name = e.name;
  request.overrides = {{field, value}};
  try {
    resolve_config(e, request);
  } catch (const UsageError& err) {
    return err.what();
  }
  return "";
}

// Messages spell a field with '_' (d_model); the flag may be given with '-' (--d-model).
bool names_field(const std::string& message, const std::string& field) {
  std::string dashed = field;
  for (char& c : dashed)
    if (c == '_') c = '-';
  return message.find(field) != std::string::npos || message.find(dashed) != std::string::npos;
}

}  // namespace

TEST_SUITE("experiments") {
  TEST_CASE("every field of every experiment refuses bad values, naming the field") {
    int cases = 0, fields = 0;
    for (const Experiment& e : all_experiments()) {
      for (const Field& f : e.config.fields()) {
        ++fields;
        const BadValues bad = bad_values_for(f);
        for (const std::string& v : bad.always) {
          ++cases;
          const std::string message = refusal(e, f.name, v);
          INFO(e.name, " --", f.name, " '", v, "': ", message);
          CHECK(!message.empty());
          CHECK(names_field(message, f.name));
        }
        for (const std::string& v : bad.by_range) {
          ++cases;
          const std::string message = refusal(e, f.name, v);
          INFO(e.name, " --", f.name, " '", v, "': ", message);
          CHECK((message.empty() || names_field(message, f.name)));
        }
        // The default itself, spelled as the command line would, is in the field's range.
        const std::string as_typed = train::options::format_value(f.default_value);
        INFO(e.name, " --", f.name, " default '", as_typed, "'");
        CHECK(refusal(e, f.name, as_typed).empty());
      }
    }
    MESSAGE(cases, " bad values over ", fields, " fields of ", all_experiments().size(),
            " experiments");
    CHECK(fields > 10 * static_cast<int>(all_experiments().size()));
  }
}

}  // namespace attn::experiments
