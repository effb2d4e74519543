// Inserting into an Abseil hash table where memory may run out. Growing such a table records the
// new capacity before it allocates the new storage, so a bad_alloc there leaves the table corrupt:
// a later lookup probes past its end (seen: a collector spinning for ever in a name lookup), and
// so does its destructor. Where a failed allocation is caught and the program goes on, the table
// is replaced by an empty one instead; its old storage is leaked, never read again.
#pragma once

#include <new>

namespace tfprof {

// Runs `insert()` (an insertion into `table`) and returns what it returns. When it throws
// bad_alloc, `table` becomes empty (what it held is forgotten, not freed) and the exception goes
// on to the caller, which counts what was lost.
template <typename Table, typename Insert>
decltype(auto) InsertOrReset(Table &table, Insert &&insert) {
  try {
    return insert();
  } catch (const std::bad_alloc &) {
    new (&table) Table();  // the corrupt table's lifetime ends here, without its destructor
    throw;
  }
}

}  // namespace tfprof
