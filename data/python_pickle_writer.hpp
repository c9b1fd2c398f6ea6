// A writer of Python's pickle format, protocol 2 (what `torch.save` writes into data.pkl):
// the inverse of data/python_pickle.hpp for the values that reader builds, so that attnlab can
// hand fairseq a checkpoint (apps/interop/fairseq_export.hpp). Each value becomes the opcodes
// CPython's pickler would use for it:
//
//   None, Bool, Int, Float      NONE, NEWTRUE/NEWFALSE, BININT1/BININT2/BININT/LONG1, BINFLOAT
//   String                      BINUNICODE (its bytes must be UTF-8)
//   List, Tuple, Dict           EMPTY_LIST/APPENDS, EMPTY_TUPLE/TUPLE1-3/TUPLE, EMPTY_DICT/SETITEMS
//   Dict named collections.OrderedDict   OrderedDict() by REDUCE, then SETITEMS
//   Global                      GLOBAL "module\nname\n"
//   Object                      its callable (GLOBAL), its arguments as a tuple, REDUCE; then
//                               its state and BUILD when it has one (argparse.Namespace(),
//                               whose attributes BUILD sets; torch's _rebuild_tensor_v2(...))
//   PersistentId                its id, BINPERSID (torch's storages)
//
// No memo is written: a value reached twice is written twice (pickle allows it; torch shares
// storages through their persistent ids, not the memo). Bytes and Sets, which protocol 2
// writes through globals, are refused, as is a cycle (a value inside itself).
#pragma once
#include <string>

#include "data/python_pickle.hpp"

namespace attn::data {

// The pickle of `value`: PROTO 2, the value, STOP.
std::string write_pickle(const PickleValue& value);

// Builders for the values a writer needs most.
PickleRef pickle_none();
PickleRef pickle_bool(bool value);
PickleRef pickle_int(int64_t value);
PickleRef pickle_float(double value);
PickleRef pickle_string(std::string text);
PickleRef pickle_list(std::vector<PickleRef> items);
PickleRef pickle_tuple(std::vector<PickleRef> items);
PickleRef pickle_dict(std::vector<std::pair<PickleRef, PickleRef>> entries);
PickleRef pickle_global(std::string module, std::string name);
// module.name(*arguments), then BUILD with `state` when given.
PickleRef pickle_object(std::string module, std::string name, std::vector<PickleRef> arguments,
                        PickleRef state = nullptr);

}  // namespace attn::data
