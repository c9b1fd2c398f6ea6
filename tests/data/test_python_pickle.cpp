// Tests of data/python_pickle: the same object pickled by CPython 3.11 with protocols 0, 2 and
// 4 (pickle.dumps; the bytes below) reads back as the same tree — dict, list, tuple, ints
// (negative, beyond 32 bits), a float, booleans, None, non-ASCII text, bytes, an OrderedDict and
// an argparse.Namespace —; malformed pickles are errors naming the input and the byte, never
// a crash (every truncation and every single-byte change of them is tried).
#include <catch.hpp>

#include <string>

#include "data/python_pickle.hpp"
#include "data/text_io.hpp"

using attn::data::DataError;
using attn::data::PickleRef;
using attn::data::PickleValue;
using attn::data::read_pickle;
using Kind = PickleValue::Kind;

namespace {

std::string from_hex(std::string_view hex) {
  std::string bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) bytes.push_back(char(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return bytes;
}

// {"a": [1, -2, 3.5, True, None, "ü"], "b": (1, 2), "c": OrderedDict([("x", b"\x00\xff")]),
//  "n": argparse.Namespace(k=5), "big": 2**40, "neg": -(2**40)}
const char* const kProtocol0 =
    "286470300a56610a70310a286c70320a49310a61492d320a6146332e350a614930310a614e6156fc0a70330a617356620a70340a2849310a"
    "49320a7470350a7356630a70360a63636f6c6c656374696f6e730a4f726465726564446963740a70370a28745270380a56780a70390a635f"
    "636f646563730a656e636f64650a7031300a28565c7530303030ff0a7031310a566c6174696e310a7031320a747031330a527031340a7373"
    "566e0a7031350a63636f70795f7265670a5f7265636f6e7374727563746f720a7031360a286361726770617273650a4e616d65737061636"
    "50a7031370a635f5f6275696c74696e5f5f0a6f626a6563740a7031380a4e747031390a527032300a28647032310a566b0a7032320a4935"
    "0a736273566269670a7032330a4c313039393531313632373737364c0a73566e65670a7032340a4c2d313039393531313632373737364c0a"
    "732e";
const char* const kProtocol2 =
    "80027d71002858010000006171015d7102284b014afeffffff47400c000000000000884e5802000000c3bc71036558010000006271044b01"
    "4b02867105580100000063710663636f6c6c656374696f6e730a4f726465726564446963740a7107295271085801000000787109635f636f"
    "646563730a656e636f64650a710a580300000000c3bf710b58060000006c6174696e31710c86710d52710e7358010000006e710f63617267"
    "70617273650a4e616d6573706163650a7110298171117d711258010000006b71134b057362580300000062696771148a0600000000000158"
    "030000006e656771158a060000000000ff752e";
const char* const kProtocol4 =
    "800495a3000000000000007d94288c0161945d94284b014afeffffff47400c000000000000884e8c02c3bc94658c0162944b014b0286948c"
    "0163948c0b636f6c6c656374696f6e73948c0b4f726465726564446963749493942952948c017894430200ff94738c016e948c0861726770"
    "61727365948c094e616d6573706163659493942981947d948c016b944b0573628c03626967948a060000000000018c036e6567948a06000000"
    "0000ff752e";

void check_the_object(const PickleRef& root) {
  REQUIRE(root->is(Kind::Dict));
  const PickleRef a = root->find("a");
  REQUIRE(a);
  REQUIRE(a->is(Kind::List));
  REQUIRE(a->items.size() == 6);
  CHECK(a->items[0]->integer == 1);
  CHECK(a->items[1]->integer == -2);
  CHECK(a->items[2]->is(Kind::Float));
  CHECK(a->items[2]->number == 3.5);
  CHECK(a->items[3]->is(Kind::Bool));
  CHECK(a->items[3]->boolean);
  CHECK(a->items[4]->is(Kind::None));
  CHECK(a->items[5]->text == "\xC3\xBC");  // ü in UTF-8
  const PickleRef b = root->find("b");
  REQUIRE(b->is(Kind::Tuple));
  CHECK(b->items.size() == 2);
  const PickleRef c = root->find("c");
  REQUIRE(c->is(Kind::Dict));
  REQUIRE(c->find("x"));
  CHECK(c->find("x")->is(Kind::Bytes));
  CHECK(c->find("x")->text == std::string("\x00\xff", 2));
  const PickleRef n = root->find("n");
  REQUIRE(n->is(Kind::Object));
  CHECK(n->qualified_name() == "argparse.Namespace");
  REQUIRE(n->find("k"));
  CHECK(n->find("k")->integer == 5);  // an attribute, set by BUILD
  CHECK(root->find("big")->integer == int64_t(1) << 40);
  CHECK(root->find("neg")->integer == -(int64_t(1) << 40));
  CHECK_FALSE(root->find("missing"));
}

}  // namespace

TEST_CASE("pickles of protocols 0, 2 and 4 read back as CPython wrote them", "[pickle]") {
  for (const char* hex : {kProtocol0, kProtocol2, kProtocol4}) {
    const std::string bytes = from_hex(hex);
    size_t consumed = 0;
    INFO(bytes.substr(0, 2));
    check_the_object(read_pickle(bytes + "trailing", "test", &consumed));
    CHECK(consumed == bytes.size());  // up to STOP: the legacy torch format reads on from there
  }
}

TEST_CASE("a value that holds itself reads back as one, and is freed with its result", "[pickle]") {
  // l = []; l.append(l); pickle.dumps(l, 2): the list reached again through the memo.
  const PickleRef list = read_pickle(from_hex("80025d71006800612e"), "cycle");
  REQUIRE(list->is(Kind::List));
  REQUIRE(list->items.size() == 1);
  CHECK(list->items[0].get() == list.get());  // (LeakSanitizer in fuzz/: no leak once `list` goes)
}

TEST_CASE("malformed pickles are errors naming the input, never a crash", "[pickle]") {
  CHECK_THROWS_WITH(read_pickle(from_hex("80024b"), "f.pkl"), Catch::Contains("f.pkl") && Catch::Contains("at byte 2"));
  CHECK_THROWS_WITH(read_pickle(from_hex("8002ff"), "f.pkl"), Catch::Contains("opcode 0xff"));
  CHECK_THROWS_WITH(read_pickle(from_hex("8002680a2e"), "f.pkl"), Catch::Contains("memo entry 10"));  // BINGET 10
  CHECK_THROWS_WITH(read_pickle(from_hex("80022e"), "f.pkl"), Catch::Contains("empty stack"));
  CHECK_THROWS_WITH(read_pickle(from_hex("8002742e"), "f.pkl"), Catch::Contains("no MARK"));
  CHECK_THROWS_WITH(read_pickle(from_hex("80028a09000000000000000001"), "f.pkl"), Catch::Contains("9 bytes"));
  CHECK_THROWS_WITH(read_pickle(from_hex("800558ffffffff"), "f.pkl"), Catch::Contains("protocol 5"));
  CHECK_THROWS_WITH(read_pickle(from_hex("8002820100"), "f.pkl"), Catch::Contains("opcode 0x82"));  // EXT1
  // Every truncation and every byte replaced by every other value: a result or a DataError.
  for (const char* hex : {kProtocol0, kProtocol2, kProtocol4}) {
    const std::string bytes = from_hex(hex);
    for (size_t cut = 0; cut < bytes.size(); ++cut) CHECK_THROWS_AS(read_pickle(bytes.substr(0, cut), "cut"), DataError);
    for (size_t at = 0; at < bytes.size(); ++at)
      for (int value = 0; value < 256; ++value) {
        std::string changed = bytes;
        changed[at] = char(value);
        try {
          read_pickle(changed, "changed");
        } catch (const DataError&) {
        }
      }
  }
}
