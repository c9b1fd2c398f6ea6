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
// writes through globals, are refused, as is a cycle (a value inside itself). The values are
// built with python_pickle.hpp's builders (pickle_int, pickle_dict, pickle_object, ...).
#pragma once
#include <string>

#include "data/python_pickle.hpp"

namespace attn::data {

// The pickle of `value`: PROTO 2, the value, STOP.
std::string write_pickle(const PickleValue& value);

}  // namespace attn::data
