// The pickle machine, without calling anything. See python_pickle.hpp.
#include "data/python_pickle.hpp"

#include <bit>
#include <cstring>
#include <optional>
#include <unordered_map>

#include <fmt/core.h>

#include "data/text_io.hpp"

namespace attn::data {

PickleRef pickle_value(PickleValue::Kind kind) {
  auto value = std::make_shared<PickleValue>();
  value->kind = kind;
  return value;
}

PickleRef pickle_none() { return pickle_value(PickleValue::Kind::None); }

PickleRef pickle_bool(bool value) {
  PickleRef v = pickle_value(PickleValue::Kind::Bool);
  v->boolean = value;
  return v;
}

PickleRef pickle_int(int64_t value) {
  PickleRef v = pickle_value(PickleValue::Kind::Int);
  v->integer = value;
  return v;
}

PickleRef pickle_float(double value) {
  PickleRef v = pickle_value(PickleValue::Kind::Float);
  v->number = value;
  return v;
}

PickleRef pickle_string(std::string text) {
  PickleRef v = pickle_value(PickleValue::Kind::String);
  v->text = std::move(text);
  return v;
}

PickleRef pickle_list(std::vector<PickleRef> items) {
  PickleRef v = pickle_value(PickleValue::Kind::List);
  v->items = std::move(items);
  return v;
}

PickleRef pickle_tuple(std::vector<PickleRef> items) {
  PickleRef v = pickle_value(PickleValue::Kind::Tuple);
  v->items = std::move(items);
  return v;
}

PickleRef pickle_dict(std::vector<std::pair<PickleRef, PickleRef>> entries) {
  PickleRef v = pickle_value(PickleValue::Kind::Dict);
  v->entries = std::move(entries);
  return v;
}

PickleRef pickle_ordered_dict(std::vector<std::pair<PickleRef, PickleRef>> entries) {
  PickleRef v = pickle_dict(std::move(entries));
  v->module = "collections";
  v->name = "OrderedDict";
  return v;
}

PickleRef pickle_persistent_id(PickleRef id) {
  PickleRef v = pickle_value(PickleValue::Kind::PersistentId);
  v->state = std::move(id);
  return v;
}

PickleRef pickle_global(std::string module, std::string name) {
  PickleRef v = pickle_value(PickleValue::Kind::Global);
  v->module = std::move(module);
  v->name = std::move(name);
  return v;
}

PickleRef pickle_object(std::string module, std::string name, std::vector<PickleRef> arguments, PickleRef state) {
  PickleRef v = pickle_value(PickleValue::Kind::Object);
  v->module = std::move(module);
  v->name = std::move(name);
  v->items = std::move(arguments);
  v->state = std::move(state);
  return v;
}

namespace {

using Kind = PickleValue::Kind;

PickleRef make_text(Kind kind, std::string text) {
  PickleRef value = pickle_value(kind);
  value->text = std::move(text);
  return value;
}

// A global by its Python 3 module name: protocols 0-2 write Python 2's for the modules that
// were renamed (what Python's unpickler maps with fix_imports, for those a pickle of data uses).
PickleRef make_global(std::string module, std::string name) {
  if (module == "copy_reg") module = "copyreg";
  else if (module == "__builtin__") module = "builtins";
  return pickle_global(std::move(module), std::move(name));
}

// The code points of a UTF-8 string as bytes, as Python's str.encode("latin1") (protocol 2
// pickles Python 3 bytes as _codecs.encode(text, "latin1")); nullopt when one is above U+00FF.
std::optional<std::string> latin1_bytes(const std::string& utf8) {
  std::string out;
  for (size_t i = 0; i < utf8.size(); ++i) {
    const auto c = static_cast<unsigned char>(utf8[i]);
    if (c < 0x80) {
      out.push_back(char(c));
    } else if ((c == 0xC2 || c == 0xC3) && i + 1 < utf8.size()) {
      out.push_back(char(((c & 0x03) << 6) | (static_cast<unsigned char>(utf8[++i]) & 0x3F)));
    } else {
      return std::nullopt;
    }
  }
  return out;
}

void append_utf8(std::string& out, uint32_t code_point) {
  if (code_point < 0x80) {
    out.push_back(char(code_point));
  } else if (code_point < 0x800) {
    out.push_back(char(0xC0 | (code_point >> 6)));
    out.push_back(char(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out.push_back(char(0xE0 | (code_point >> 12)));
    out.push_back(char(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(char(0x80 | (code_point & 0x3F)));
  } else {
    out.push_back(char(0xF0 | (code_point >> 18)));
    out.push_back(char(0x80 | ((code_point >> 12) & 0x3F)));
    out.push_back(char(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(char(0x80 | (code_point & 0x3F)));
  }
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Python's "raw-unicode-escape" (protocol 0's UNICODE): a byte is the code point of that
// value, except \uXXXX and \UXXXXXXXX, which name one; nullopt when an escape is malformed.
std::optional<std::string> raw_unicode_escape(std::string_view raw) {
  std::string out;
  for (size_t i = 0; i < raw.size(); ++i) {
    const auto byte = static_cast<unsigned char>(raw[i]);
    const size_t digits = byte == '\\' && i + 1 < raw.size() ? (raw[i + 1] == 'u' ? 4 : raw[i + 1] == 'U' ? 8 : 0) : 0;
    if (digits == 0) {
      append_utf8(out, byte);
      continue;
    }
    if (i + 2 + digits > raw.size()) return std::nullopt;
    uint32_t code_point = 0;
    for (size_t k = 0; k < digits; ++k) {
      const char c = raw[i + 2 + k];
      const int value = hex_digit(c);
      if (value < 0) return std::nullopt;
      code_point = code_point * 16 + uint32_t(value);
    }
    if (code_point > 0x10FFFF) return std::nullopt;
    append_utf8(out, code_point);
    i += 1 + digits;
  }
  return out;
}

// Every value a run made. A pickle may link values into a cycle (a list appended to itself,
// an object whose state holds it): shared ownership alone would never free them. The result
// keeps its arena alive, and the arena cuts every link before it goes.
struct PickleArena {
  std::vector<PickleRef> values;
  ~PickleArena() {
    for (const PickleRef& value : values) {
      value->items.clear();
      value->entries.clear();
      value->state.reset();
    }
  }
};

class PickleMachine {
 public:
  PickleMachine(std::string_view bytes, const std::string& what) : bytes_(bytes), what_(what) {}

  // The result, sharing the ownership of the arena (an error frees it).
  PickleRef run(size_t* consumed) {
    while (true) {
      opcode_at_ = position_;
      const auto op = static_cast<unsigned char>(take(1)[0]);
      if (op == '.') {
        PickleRef result = pop();
        if (consumed) *consumed = position_;
        return PickleRef(arena_, result.get());
      }
      step(op);
    }
  }

 private:
  [[noreturn]] void fail(const std::string& problem) const {
    throw DataError(fmt::format("{}: not a pickle it can read: {} (at byte {})", what_, problem, opcode_at_));
  }

  std::string_view take(size_t n) {
    if (n > bytes_.size() - position_) fail(fmt::format("{} bytes needed, {} left", n, bytes_.size() - position_));
    const std::string_view part = bytes_.substr(position_, n);
    position_ += n;
    return part;
  }
  uint64_t little_endian(size_t n) {
    const std::string_view raw = take(n);
    uint64_t value = 0;
    for (size_t i = 0; i < n; ++i) value |= uint64_t(static_cast<unsigned char>(raw[i])) << (8 * i);
    return value;
  }
  size_t length(size_t n) {  // a length prefix, checked against what is left
    const uint64_t value = little_endian(n);
    if (value > bytes_.size() - position_)
      fail(fmt::format("a length of {} with {} bytes left", value, bytes_.size() - position_));
    return size_t(value);
  }
  std::string line() {
    const size_t end = bytes_.find('\n', position_);
    if (end == std::string_view::npos) fail("a line without its end");
    std::string text(bytes_.substr(position_, end - position_));
    position_ = end + 1;
    return text;
  }
  int64_t decimal(const std::string& text) {
    try {
      size_t used = 0;
      const int64_t value = std::stoll(text, &used);
      if (used == text.size()) return value;
    } catch (const std::exception&) {
    }
    fail(fmt::format("'{}' is not a 64-bit integer", text));
  }
  // LONG1/LONG4: little-endian two's complement of n bytes (at most 8 here).
  int64_t long_bytes(size_t n) {
    if (n > 8) fail(fmt::format("an integer of {} bytes", n));
    if (n == 0) return 0;
    uint64_t value = little_endian(n);
    if (n < 8 && (value >> (8 * n - 1)) & 1) value |= ~uint64_t(0) << (8 * n);  // sign-extend
    return std::bit_cast<int64_t>(value);
  }

  // Every value the machine makes is pushed (and so kept in the arena) before anything links it.
  void push(PickleRef value) {
    arena_->values.push_back(value);
    stack_.push_back(std::move(value));
  }
  PickleRef pop() {
    if (stack_.empty()) fail("a value popped from an empty stack");
    PickleRef value = std::move(stack_.back());
    stack_.pop_back();
    return value;
  }
  PickleRef& top() {
    if (stack_.empty()) fail("no value on the stack");
    return stack_.back();
  }
  std::vector<PickleRef> pop_mark() {
    if (marks_.empty()) fail("no MARK");
    std::vector<PickleRef> items = std::move(stack_);
    stack_ = std::move(marks_.back());
    marks_.pop_back();
    return items;
  }
  PickleRef popped_string() {
    PickleRef value = pop();
    if (!value->is(Kind::String)) fail("STACK_GLOBAL needs two strings");
    return value;
  }
  void memo_put(uint64_t index) { memo_[index] = top(); }
  PickleRef memo_get(uint64_t index) {
    const auto found = memo_.find(index);
    if (found == memo_.end()) fail(fmt::format("memo entry {} was never stored", index));
    return found->second;
  }

  PickleRef sequence(Kind kind, std::vector<PickleRef> items) {
    PickleRef value = pickle_value(kind);
    value->items = std::move(items);
    return value;
  }
  void add_entries(PickleValue& target, const std::vector<PickleRef>& flat) {
    if (!target.is(Kind::Dict) && !target.is(Kind::Object)) fail("SETITEM(S) on a value that is no dict");
    if (flat.size() % 2 != 0) fail("SETITEMS with a key without its value");
    for (size_t i = 0; i < flat.size(); i += 2) target.entries.emplace_back(flat[i], flat[i + 1]);
  }
  void add_items(PickleValue& target, const std::vector<PickleRef>& items, Kind expected) {
    if (!target.is(expected))
      fail(expected == Kind::List ? "APPEND(S) on a value that is no list" : "ADDITEMS on a value that is no set");
    target.items.insert(target.items.end(), items.begin(), items.end());
  }

  // An object made by calling `callable` with `args`: the few whose meaning is plain data
  // become that data, the others an Object naming what would have been called.
  PickleRef reduce(const PickleRef& callable, const PickleRef& args) {
    if (!callable->is(Kind::Global)) fail("REDUCE of a value that is no global");
    if (!args->is(Kind::Tuple)) fail("REDUCE with arguments that are no tuple");
    const std::string name = callable->qualified_name();
    const std::vector<PickleRef>& a = args->items;
    if (name == "collections.OrderedDict" && a.empty()) return pickle_value(Kind::Dict);
    if (name == "_codecs.encode" && a.size() == 2 && a[0]->is(Kind::String) && a[1]->is(Kind::String) &&
        (a[1]->text == "latin1" || a[1]->text == "latin-1")) {
      if (std::optional<std::string> raw = latin1_bytes(a[0]->text)) return make_text(Kind::Bytes, std::move(*raw));
      fail("_codecs.encode of a character beyond latin-1");
    }
    if (name == "copyreg._reconstructor" && a.size() == 3 && a[0]->is(Kind::Global)) {
      PickleRef object = pickle_object(a[0]->module, a[0]->name, {});
      if (!a[2]->is(Kind::None)) object->items = {a[2]};
      return object;
    }
    PickleRef object = pickle_object(callable->module, callable->name, {});
    object->items = a;
    return object;
  }
  PickleRef new_object(const PickleRef& cls, std::vector<PickleRef> args) {
    if (!cls->is(Kind::Global)) fail("NEWOBJ/OBJ of a value that is no class");
    if (cls->qualified_name() == "collections.OrderedDict") return pickle_value(Kind::Dict);
    PickleRef object = pickle_object(cls->module, cls->name, {});
    object->items = std::move(args);
    return object;
  }

  void step(unsigned char op) {
    switch (op) {
      case 0x80: if (const uint64_t p = little_endian(1); p > 4) fail(fmt::format("protocol {}", p)); break;  // PROTO
      case 0x95: little_endian(8); break;  // FRAME: its length, a hint
      case '}': push(pickle_value(Kind::Dict)); break;
      case ']': push(pickle_value(Kind::List)); break;
      case ')': push(pickle_value(Kind::Tuple)); break;
      case 0x8f: push(pickle_value(Kind::Set)); break;  // EMPTY_SET
      case '(': marks_.push_back(std::move(stack_)); stack_.clear(); break;  // MARK
      case '0': if (stack_.empty()) pop_mark(); else stack_.pop_back(); break;  // POP
      case '1': pop_mark(); break;  // POP_MARK
      case '2': push(top()); break;  // DUP
      case 'N': push(pickle_value(Kind::None)); break;
      case 0x88: case 0x89: { PickleRef b = pickle_value(Kind::Bool); b->boolean = op == 0x88; push(b); break; }
      case 'I': {  // INT: a decimal line; 01 and 00 are True and False
        const std::string text = line();
        if (text == "01" || text == "00") { PickleRef b = pickle_value(Kind::Bool); b->boolean = text == "01"; push(b); }
        else push(pickle_int(decimal(text)));
        break;
      }
      case 'L': {  // LONG: a decimal line, with Python 2's trailing L
        std::string text = line();
        if (text.ends_with('L')) text.pop_back();
        push(pickle_int(decimal(text)));
        break;
      }
      case 'J': push(pickle_int(std::bit_cast<int32_t>(uint32_t(little_endian(4))))); break;  // BININT
      case 'K': push(pickle_int(int64_t(little_endian(1)))); break;  // BININT1
      case 'M': push(pickle_int(int64_t(little_endian(2)))); break;  // BININT2
      case 0x8a: push(pickle_int(long_bytes(size_t(little_endian(1))))); break;  // LONG1
      case 0x8b: push(pickle_int(long_bytes(length(4)))); break;  // LONG4
      case 'F': { PickleRef f = pickle_value(Kind::Float); f->number = std::strtod(line().c_str(), nullptr); push(f); break; }
      case 'G': {  // BINFLOAT: big-endian
        const std::string_view raw = take(8);
        uint64_t bits = 0;
        for (char c : raw) bits = (bits << 8) | static_cast<unsigned char>(c);
        PickleRef f = pickle_value(Kind::Float);
        f->number = std::bit_cast<double>(bits);
        push(f);
        break;
      }
      case 'X': push(make_text(Kind::String, std::string(take(length(4))))); break;  // BINUNICODE
      case 0x8c: push(make_text(Kind::String, std::string(take(length(1))))); break;  // SHORT_BINUNICODE
      case 0x8d: push(make_text(Kind::String, std::string(take(length(8))))); break;  // BINUNICODE8
      case 'V': {  // UNICODE
        std::optional<std::string> text = raw_unicode_escape(line());
        if (!text) fail("a malformed \\u escape");
        push(make_text(Kind::String, std::move(*text)));
        break;
      }
      case 'T': push(make_text(Kind::String, std::string(take(length(4))))); break;  // BINSTRING (Python 2 str)
      case 'U': push(make_text(Kind::String, std::string(take(length(1))))); break;  // SHORT_BINSTRING
      case 'B': push(make_text(Kind::Bytes, std::string(take(length(4))))); break;  // BINBYTES
      case 'C': push(make_text(Kind::Bytes, std::string(take(length(1))))); break;  // SHORT_BINBYTES
      case 0x8e: case 0x96: push(make_text(Kind::Bytes, std::string(take(length(8))))); break;  // BINBYTES8, BYTEARRAY8
      case 't': push(sequence(Kind::Tuple, pop_mark())); break;
      case 0x85: case 0x86: case 0x87: {  // TUPLE1, TUPLE2, TUPLE3
        std::vector<PickleRef> items(op - 0x84);
        for (size_t i = items.size(); i-- > 0;) items[i] = pop();
        push(sequence(Kind::Tuple, std::move(items)));
        break;
      }
      case 'l': push(sequence(Kind::List, pop_mark())); break;
      case 'a': { PickleRef v = pop(); add_items(*top(), {v}, Kind::List); break; }  // APPEND
      case 'e': { std::vector<PickleRef> items = pop_mark(); add_items(*top(), items, Kind::List); break; }  // APPENDS
      case 'd': { PickleRef d = pickle_value(Kind::Dict); add_entries(*d, pop_mark()); push(d); break; }  // DICT
      case 's': { PickleRef v = pop(), k = pop(); add_entries(*top(), {k, v}); break; }  // SETITEM
      case 'u': { std::vector<PickleRef> flat = pop_mark(); add_entries(*top(), flat); break; }  // SETITEMS
      case 0x90: { std::vector<PickleRef> items = pop_mark(); add_items(*top(), items, Kind::Set); break; }  // ADDITEMS
      case 0x91: push(sequence(Kind::Set, pop_mark())); break;  // FROZENSET
      case 'c': { std::string module = line(); push(make_global(std::move(module), line())); break; }  // GLOBAL
      case 0x93: {  // STACK_GLOBAL
        PickleRef name = popped_string(), module = popped_string();
        push(make_global(module->text, name->text));
        break;
      }
      case 'R': { PickleRef args = pop(), callable = pop(); push(reduce(callable, args)); break; }  // REDUCE
      case 0x81: {  // NEWOBJ
        PickleRef args = pop(), cls = pop();
        if (!args->is(Kind::Tuple)) fail("NEWOBJ with arguments that are no tuple");
        push(new_object(cls, args->items));
        break;
      }
      case 0x92: {  // NEWOBJ_EX (its keyword arguments dropped)
        pop();
        PickleRef args = pop(), cls = pop();
        push(new_object(cls, args->items));
        break;
      }
      case 'o': {  // OBJ
        std::vector<PickleRef> items = pop_mark();
        if (items.empty()) fail("OBJ without its class");
        PickleRef cls = items.front();
        push(new_object(cls, std::vector<PickleRef>(items.begin() + 1, items.end())));
        break;
      }
      case 'i': {  // INST
        std::string module = line(), name = line();
        push(new_object(make_global(module, name), pop_mark()));
        break;
      }
      case 'b': {  // BUILD: the state of the object below it
        PickleRef state = pop();
        PickleValue& target = *top();
        if (!target.is(Kind::Object) && !target.is(Kind::Dict)) fail("BUILD on a value that is no object");
        target.state = std::move(state);
        break;
      }
      case 'Q': { PickleRef id = pickle_value(Kind::PersistentId); id->state = pop(); push(id); break; }  // BINPERSID
      case 'P': {  // PERSID
        PickleRef id = pickle_value(Kind::PersistentId);
        id->state = make_text(Kind::String, line());
        push(id);
        break;
      }
      case 'p': memo_put(uint64_t(decimal(line()))); break;  // PUT
      case 'q': memo_put(little_endian(1)); break;  // BINPUT
      case 'r': memo_put(little_endian(4)); break;  // LONG_BINPUT
      case 0x94: memo_put(memo_.size()); break;  // MEMOIZE
      case 'g': push(memo_get(uint64_t(decimal(line())))); break;  // GET
      case 'h': push(memo_get(little_endian(1))); break;  // BINGET
      case 'j': push(memo_get(little_endian(4))); break;  // LONG_BINGET
      default: fail(fmt::format("opcode 0x{:02x}", op));
    }
  }

  std::string_view bytes_;
  const std::string& what_;
  size_t position_ = 0, opcode_at_ = 0;
  std::vector<PickleRef> stack_;
  std::vector<std::vector<PickleRef>> marks_;
  std::unordered_map<uint64_t, PickleRef> memo_;
  std::shared_ptr<PickleArena> arena_ = std::make_shared<PickleArena>();
};

}  // namespace

PickleRef PickleValue::find(std::string_view key) const {
  if (kind == Kind::Object) return state ? state->find(key) : nullptr;
  for (const auto& [k, v] : entries)
    if (k->is(Kind::String) && k->text == key) return v;
  return nullptr;
}

PickleRef read_pickle(std::string_view bytes, const std::string& what, size_t* consumed) {
  return PickleMachine(bytes, what).run(consumed);
}

}  // namespace attn::data
