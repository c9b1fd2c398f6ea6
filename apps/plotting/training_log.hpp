// Training curves from a run's train_log.jsonl (written by the trainer,
// apps/training/trainer.cpp): one JSON object a line, {"type": "train" | "valid", "update",
// "epoch", "loss", "nll_loss", "ppl"}, training records also "lr", "gnorm",
// "tokens_per_second" and "elapsed" (training seconds; validation records too since they were
// given it). Other records (the run's summary, "done") are not curves and are skipped.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "apps/plotting/line_chart.hpp"

namespace attn::plot {

struct LogRecord {
  bool valid = false;  // a validation record (else training)
  double update = 0;
  // Training seconds. Validation records without it take their update's time from the
  // training records that have it; with none to go by it stays unknown.
  std::optional<double> elapsed;
  std::map<std::string, double> values;  // every other numeric field
  std::string subset;  // a validation record's split ("valid" in logs from before --valid-subset)
};

// The records of a log in update order. A run resumed from an earlier checkpoint logs some
// updates again: a training record for update u replaces every earlier record at u or later.
// Of a run validated on several splits (train --valid-subset) only the first split's
// validation records are kept, the one that picked its best checkpoint. Errors name the
// file and line (not JSON, no "type" or "update"), or the file (a folder, not readable, no record).
std::vector<LogRecord> read_training_log(const std::string& path);

// The log of a run named on the command line: a save dir's train_log.jsonl, or the file itself.
std::string training_log_of(const std::string& run);

// The runs' default labels, each the end of its path long enough to tell it from the others'
// ("a/checkpoints", "b/checkpoints"): a save dir's name, or a log's own file name unless it is
// its save dir's train_log.jsonl. A run named twice (the same path) is numbered: "run (2)".
std::vector<std::string> run_labels(const std::vector<std::string>& runs);

struct Run {
  std::string label;
  std::vector<LogRecord> records;
};

enum class XAxis { kUpdates, kMinutes };

// One panel per metric ("loss", "nll_loss", "ppl", "lr", "gnorm", "tokens_per_second"): a line
// per run through its training records, squares at its validation records where they carry
// the metric; perplexity on a log scale; against minutes, only the records whose time is
// known. Errors: an unknown metric (listing the known ones), two runs with one label, a run
// with no known time against minutes.
std::vector<Panel> training_panels(const std::vector<Run>& runs, const std::vector<std::string>& metrics, XAxis x);

const std::vector<std::string>& plottable_metrics();

}  // namespace attn::plot
