// Tests of data/python_pickle_writer: every kind of value the reader builds, written and read
// back (data/python_pickle), comes back the same — ints at every opcode's edges, floats,
// non-ASCII text, nested containers, an OrderedDict, a global, an object with arguments and
// state, a persistent id —; the bytes of one such value are those CPython 3.11 was shown to
// unpickle as the value (pickle.loads, recorded below); bytes, sets, cycles and text that is
// not UTF-8 are refused.
#include <catch.hpp>

#include <cmath>
#include <limits>
#include <string>

#include "data/python_pickle.hpp"
#include "data/python_pickle_writer.hpp"
#include "data/text_io.hpp"

using namespace attn::data;
using Kind = PickleValue::Kind;

namespace {

// Whether two trees hold the same values (an OrderedDict reads back as a plain Dict).
bool same(const PickleValue& a, const PickleValue& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Kind::None: return true;
    case Kind::Bool: return a.boolean == b.boolean;
    case Kind::Int: return a.integer == b.integer;
    case Kind::Float: return std::bit_cast<uint64_t>(a.number) == std::bit_cast<uint64_t>(b.number);
    case Kind::String: return a.text == b.text;
    case Kind::Global: return a.qualified_name() == b.qualified_name();
    case Kind::PersistentId: return same(*a.state, *b.state);
    default: break;
  }
  if (a.items.size() != b.items.size() || a.entries.size() != b.entries.size()) return false;
  for (size_t i = 0; i < a.items.size(); ++i)
    if (!same(*a.items[i], *b.items[i])) return false;
  for (size_t i = 0; i < a.entries.size(); ++i)
    if (!same(*a.entries[i].first, *b.entries[i].first) || !same(*a.entries[i].second, *b.entries[i].second))
      return false;
  if (a.kind == Kind::Object)
    return a.qualified_name() == b.qualified_name() && bool(a.state) == bool(b.state) && (!a.state || same(*a.state, *b.state));
  return true;
}

std::string hex(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) out += "0123456789abcdef"[c >> 4], out += "0123456789abcdef"[c & 15];
  return out;
}

}  // namespace

TEST_CASE("values written as pickles read back as the same values", "[python_pickle]") {
  std::vector<PickleRef> ints;
  for (int64_t i : {int64_t(0), int64_t(1), int64_t(255), int64_t(256), int64_t(65535), int64_t(65536), int64_t(-1),
                    int64_t(-128), int64_t(-129), int64_t(INT32_MIN), int64_t(INT32_MAX), int64_t(1) << 31,
                    -(int64_t(1) << 31) - 1, int64_t(1) << 40, -(int64_t(1) << 40), int64_t(127) << 56,
                    std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()})
    ints.push_back(pickle_int(i));
  std::vector<PickleRef> floats;
  for (double x : {0.0, -0.0, 1.5, -2.25e-300, 1e308, std::numeric_limits<double>::infinity()})
    floats.push_back(pickle_float(x));
  const PickleRef ordered = pickle_ordered_dict({{pickle_string("w"), pickle_tuple({})}});
  std::vector<PickleRef> tuples;
  for (size_t n = 0; n <= 4; ++n) tuples.push_back(pickle_tuple(std::vector<PickleRef>(n, pickle_int(7))));
  const PickleRef root = pickle_dict({
      {pickle_string("ints"), pickle_list(ints)},
      {pickle_string("floats"), pickle_list(floats)},
      {pickle_string("text"), pickle_string("Grüße, 日本 \n")},
      {pickle_string("flags"), pickle_list({pickle_bool(true), pickle_bool(false), pickle_none()})},
      {pickle_string("tuples"), pickle_list(tuples)},
      {pickle_string("empty"), pickle_list({})},
      {pickle_string("ordered"), ordered},
      {pickle_int(3), pickle_global("torch", "FloatStorage")},
      {pickle_string("namespace"),
       pickle_object("argparse", "Namespace", {}, pickle_dict({{pickle_string("arch"), pickle_string("lightconv")}}))},
      {pickle_string("tensor"),
       pickle_object("torch._utils", "_rebuild_tensor_v2",
                     {pickle_persistent_id(pickle_tuple({pickle_string("storage"), pickle_global("torch", "FloatStorage"),
                                                  pickle_string("0"), pickle_string("cpu"), pickle_int(6)})),
                      pickle_int(0), pickle_tuple({pickle_int(2), pickle_int(3)}),
                      pickle_tuple({pickle_int(3), pickle_int(1)}), pickle_bool(false), ordered})},
  });
  const std::string bytes = write_pickle(*root);
  size_t consumed = 0;
  const PickleRef back = read_pickle(bytes, "written", &consumed);
  CHECK(consumed == bytes.size());
  CHECK(same(*root, *back));
  // An OrderedDict is written as one: collections.OrderedDict() then its items.
  CHECK(bytes.find("ccollections\nOrderedDict\n)R") != std::string::npos);
}

TEST_CASE("a small pickle's bytes are those CPython unpickles as the value", "[python_pickle]") {
  // pickle.loads(bytes.fromhex(...)) in CPython 3.11 gives
  // {'a': [1, -2, 3.5, True, None, 'ü'], 'n': Namespace(k=70000), 'big': -1099511627776}
  const PickleRef value = pickle_dict(
      {{pickle_string("a"), pickle_list({pickle_int(1), pickle_int(-2), pickle_float(3.5), pickle_bool(true),
                                         pickle_none(), pickle_string("ü")})},
       {pickle_string("n"),
        pickle_object("argparse", "Namespace", {}, pickle_dict({{pickle_string("k"), pickle_int(70000)}}))},
       {pickle_string("big"), pickle_int(-(int64_t(1) << 40))}});
  CHECK(hex(write_pickle(*value)) ==
        "80027d285801000000615d284b014afeffffff47400c000000000000884e5802000000c3bc6558010000006e636172677061"
        "727365"
        "0a4e616d6573706163650a29527d2858010000006b4a70110100756258030000006269678a060000000000ff752e");
}

TEST_CASE("what protocol 2 cannot write plainly, a cycle and text that is not UTF-8 are refused", "[python_pickle]") {
  auto bytes = std::make_shared<PickleValue>();
  bytes->kind = Kind::Bytes;
  CHECK_THROWS_AS(write_pickle(*pickle_list({bytes})), DataError);
  const PickleRef list = pickle_list({});
  list->items.push_back(list);
  CHECK_THROWS_WITH(write_pickle(*list), Catch::Contains("contains itself"));
  list->items.clear();  // no cycle left for the shared pointers
  CHECK_THROWS_WITH(write_pickle(*pickle_string("\xff")), Catch::Contains("not UTF-8"));
  CHECK_THROWS_AS(write_pickle(*pickle_global("torch", "")), DataError);
  // The same value twice (not inside itself) is no cycle.
  const PickleRef shared = pickle_int(5);
  CHECK_NOTHROW(write_pickle(*pickle_list({shared, shared})));
}
