// Python's pickle format, protocol 2, written. See python_pickle_writer.hpp.
#include "data/python_pickle_writer.hpp"

#include <bit>
#include <cstring>
#include <set>

#include <fmt/core.h>

#include "data/text_io.hpp"

namespace attn::data {
namespace {

using Kind = PickleValue::Kind;

// Opcodes (CPython's Lib/pickletools.py names them).
constexpr char kProto = '\x80', kStop = '.', kNone = 'N', kNewTrue = '\x88', kNewFalse = '\x89';
constexpr char kBinInt1 = 'K', kBinInt2 = 'M', kBinInt = 'J', kLong1 = '\x8a', kBinFloat = 'G';
constexpr char kBinUnicode = 'X', kEmptyList = ']', kAppends = 'e', kEmptyTuple = ')', kTuple = 't';
constexpr char kTuple1 = '\x85', kEmptyDict = '}', kSetItems = 'u', kMark = '(', kGlobal = 'c';
constexpr char kReduce = 'R', kBuild = 'b', kBinPersId = 'Q';

class PickleWriter {
 public:
  std::string finish(const PickleValue& value) {
    out_ = {kProto, '\x02'};
    write(value);
    out_ += kStop;
    return std::move(out_);
  }

 private:
  void little_endian(uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) out_ += char((value >> (8 * i)) & 0xff);
  }

  void write_int(int64_t value) {
    if (value >= 0 && value < 256) {
      out_ += kBinInt1;
      little_endian(uint64_t(value), 1);
    } else if (value >= 0 && value < 65536) {
      out_ += kBinInt2;
      little_endian(uint64_t(value), 2);
    } else if (value >= INT32_MIN && value <= INT32_MAX) {
      out_ += kBinInt;
      little_endian(uint64_t(uint32_t(int32_t(value))), 4);
    } else {  // LONG1: the shortest two's complement little-endian bytes
      std::string bytes;
      for (int64_t rest = value;;) {
        bytes += char(rest & 0xff);
        const int64_t next = rest >> 8;  // arithmetic: keeps the sign
        const bool sign_bit = (bytes.back() & 0x80) != 0;
        if ((next == 0 && !sign_bit) || (next == -1 && sign_bit)) break;
        rest = next;
      }
      out_ += kLong1;
      out_ += char(bytes.size());
      out_ += bytes;
    }
  }

  void write_float(double value) {
    out_ += kBinFloat;
    const uint64_t bits = std::bit_cast<uint64_t>(value);
    for (int i = 7; i >= 0; --i) out_ += char((bits >> (8 * i)) & 0xff);  // big-endian
  }

  void write_string(const std::string& text) {
    if (const size_t bad = find_invalid_utf8(text); bad != std::string_view::npos)
      throw DataError(fmt::format("pickle: a string that is not UTF-8 (byte {})", bad));
    if (text.size() > UINT32_MAX) throw DataError("pickle: a string of 4 GiB or more");
    out_ += kBinUnicode;
    little_endian(text.size(), 4);
    out_ += text;
  }

  void write_global(const std::string& module, const std::string& name) {
    for (const std::string* part : {&module, &name})
      if (part->empty() || part->find('\n') != std::string::npos)
        throw DataError(fmt::format("pickle: a global named '{}.{}'", module, name));
    out_ += kGlobal;
    out_ += module + "\n" + name + "\n";
  }

  void write_items(const std::vector<PickleRef>& items) {
    for (const PickleRef& item : items) write(*item);
  }

  void write_tuple(const std::vector<PickleRef>& items) {
    if (items.empty()) {
      out_ += kEmptyTuple;
    } else if (items.size() <= 3) {
      write_items(items);
      out_ += char(kTuple1 + char(items.size() - 1));  // TUPLE1, TUPLE2, TUPLE3
    } else {
      out_ += kMark;
      write_items(items);
      out_ += kTuple;
    }
  }

  void write_entries(const std::vector<std::pair<PickleRef, PickleRef>>& entries) {
    if (entries.empty()) return;
    out_ += kMark;
    for (const auto& [key, value] : entries) {
      write(*key);
      write(*value);
    }
    out_ += kSetItems;
  }

  void write(const PickleValue& value) {
    if (!open_.insert(&value).second) throw DataError("pickle: a value that contains itself");
    switch (value.kind) {
      case Kind::None: out_ += kNone; break;
      case Kind::Bool: out_ += value.boolean ? kNewTrue : kNewFalse; break;
      case Kind::Int: write_int(value.integer); break;
      case Kind::Float: write_float(value.number); break;
      case Kind::String: write_string(value.text); break;
      case Kind::List:
        out_ += kEmptyList;
        if (!value.items.empty()) {
          out_ += kMark;
          write_items(value.items);
          out_ += kAppends;
        }
        break;
      case Kind::Tuple: write_tuple(value.items); break;
      case Kind::Dict:
        if (value.qualified_name() == "collections.OrderedDict") {
          write_global(value.module, value.name);
          out_ += kEmptyTuple;
          out_ += kReduce;
        } else {
          out_ += kEmptyDict;
        }
        write_entries(value.entries);
        break;
      case Kind::Global: write_global(value.module, value.name); break;
      case Kind::Object:
        write_global(value.module, value.name);
        write_tuple(value.items);
        out_ += kReduce;
        if (value.state) {
          write(*value.state);
          out_ += kBuild;
        }
        break;
      case Kind::PersistentId:
        if (!value.state) throw DataError("pickle: a persistent id without its id");
        write(*value.state);
        out_ += kBinPersId;
        break;
      case Kind::Bytes:
      case Kind::Set: throw DataError("pickle: bytes and sets are not written (protocol 2 needs globals for them)");
    }
    open_.erase(&value);
  }

  std::string out_;
  std::set<const PickleValue*> open_;  // the values being written: one met again is a cycle
};

}  // namespace

std::string write_pickle(const PickleValue& value) { return PickleWriter().finish(value); }

}  // namespace attn::data
