// A reader of Python's pickle format (protocols 0 to 4), enough to read the files
// `torch.save` writes (data.pkl in a zip archive, or the pickles of the legacy format) without
// Python: it runs the pickle machine's opcodes and builds a tree of plain values. Nothing is
// ever called: a global (`collections.OrderedDict`, `argparse.Namespace`,
// `torch._utils._rebuild_tensor_v2`) is kept as its name, and what the pickle asks to build
// from it (REDUCE, NEWOBJ, BUILD) as an Object holding that name, the arguments and the state,
// for the caller to interpret. `collections.OrderedDict()` becomes a Dict at once, since its
// items follow as SETITEMS. A persistent id (torch's storages) is kept as a PersistentId.
//
// The format: https://docs.python.org/3/library/pickle.html and CPython's Lib/pickletools.py,
// which documents every opcode. Values are shared as in Python (the memo hands out the same
// object again), so an Object's arguments may be reached twice. Malformed input (an unknown
// opcode, a truncated argument, a stack or memo index out of range, a MARK missing) is a
// DataError naming `what` and the byte offset; protocol 5's out-of-band buffers and the
// extension registry (EXT1/2/4) are refused the same way.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attn::data {

struct PickleValue;
using PickleRef = std::shared_ptr<PickleValue>;

struct PickleValue {
  enum class Kind { None, Bool, Int, Float, String, Bytes, List, Tuple, Dict, Set, Global, Object, PersistentId };
  Kind kind = Kind::None;
  bool boolean = false;
  int64_t integer = 0;  // Int (a LONG beyond 64 bits is refused)
  double number = 0.0;  // Float
  std::string text;     // String (UTF-8), Bytes
  std::vector<PickleRef> items;                          // List, Tuple, Set; Object: its arguments
  std::vector<std::pair<PickleRef, PickleRef>> entries;  // Dict, in insertion order
  std::string module, name;                              // Global, Object: the class or function
  // Object: its state (BUILD); Dict: an OrderedDict's attributes; PersistentId: the id.
  PickleRef state;

  // The value under string key `key` of a Dict, or of an Object's state Dict (a Namespace's
  // attributes); null when absent.
  PickleRef find(std::string_view key) const;
  bool is(Kind k) const { return kind == k; }
  std::string qualified_name() const { return module + "." + name; }  // Global, Object
};

// Builders of values, for the reader and for writers (python_pickle_writer.hpp).
PickleRef pickle_value(PickleValue::Kind kind);  // an empty value of `kind`
PickleRef pickle_none();
PickleRef pickle_bool(bool value);
PickleRef pickle_int(int64_t value);
PickleRef pickle_float(double value);
PickleRef pickle_string(std::string text);
PickleRef pickle_list(std::vector<PickleRef> items);
PickleRef pickle_tuple(std::vector<PickleRef> items);
PickleRef pickle_dict(std::vector<std::pair<PickleRef, PickleRef>> entries);
// A Dict named collections.OrderedDict: a writer writes it as one (a reader reads either as a Dict).
PickleRef pickle_ordered_dict(std::vector<std::pair<PickleRef, PickleRef>> entries);
PickleRef pickle_persistent_id(PickleRef id);
PickleRef pickle_global(std::string module, std::string name);
// module.name(*arguments), with `state` for BUILD when given.
PickleRef pickle_object(std::string module, std::string name, std::vector<PickleRef> arguments,
                        PickleRef state = nullptr);

// Runs the pickle in `bytes` (one pickle, ending in STOP) and returns its result, which keeps
// every value of the run alive (the values it links to are valid while it is held). `what`
// names the file (and part) in errors. `consumed`, when given, receives the bytes read up to STOP:
// the legacy torch format writes several pickles one after another.
PickleRef read_pickle(std::string_view bytes, const std::string& what, size_t* consumed = nullptr);

}  // namespace attn::data
