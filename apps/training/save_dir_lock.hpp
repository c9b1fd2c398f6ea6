// The lock of a training save dir: while `attnlab train` runs, its save dir holds the file
// `train.lock` = {"pid", "host", "started"} of the run. Two trainers on one save dir would
// overwrite each other's checkpoints, so a second one stops at once with an error naming
// the lock's owner. A lock whose process no longer runs on this host (a run that was killed)
// is stale: it is taken over with a warning. The lock records the process's start time in
// clock ticks since boot ("process_start", from /proc), so the same pid given to a later
// process (a restarted container) does not pass for the owner. A lock from another host cannot be checked and is
// an error (remove it by hand when that run is gone).
//
// Taking the lock is also the start-up probe that the save dir is writable: a read-only or
// unwritable save dir fails here, before any training, naming the dir.
//
// The lock file is created whole and atomically: its contents go to a temp file that is then
// hard-linked to `train.lock` (link() fails when the name exists, as O_EXCL does), so a lock
// file is never seen half written. The destructor removes it (normal exit and exceptions;
// after a kill the next run finds it stale).
#pragma once
#include <functional>
#include <optional>
#include <string>

namespace attn::app {

class SaveDirLock {
 public:
  // Creates `save_dir` if needed and locks it; `warn` receives the stale-lock warning.
  // Throws attn::Error when the dir is locked by a live run or is not writable.
  SaveDirLock(const std::string& save_dir, const std::function<void(const std::string&)>& warn);
  ~SaveDirLock();
  SaveDirLock(const SaveDirLock&) = delete;
  SaveDirLock& operator=(const SaveDirLock&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The lock file of `dir` and its owner ("pid 12, host h, started 2026-12-01 10:00:00 UTC") when
// a training run holds `dir` now: its lock names a process that runs on this host, or one on
// another host (which cannot be checked), or cannot be read. Nothing when the dir has no lock
// or its run is gone. Commands that write checkpoints outside training refuse such a dir.
std::optional<std::string> running_training(const std::string& dir);

}  // namespace attn::app
