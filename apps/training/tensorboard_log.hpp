// train --tensorboard-logdir DIR (fairseq's flag): the records of train_log.jsonl also as
// TensorBoard scalars, in the runs fairseq writes — DIR/train_inner for the records of each log
// interval, DIR/train for each epoch's statistics, DIR/<subset> (DIR/valid, ...) for each
// validation —, each scalar at its update, under fairseq's names (loss, nll_loss, ppl, lr,
// gnorm, wpb, bsz, ups, train_wall, clip, wps for the target tokens per second, wall for the
// training seconds, bleu, best_loss, best_bleu). Each run's first event file also holds the
// command line as a text (fairseq's "sys.argv"). A resumed run adds new event files beside the
// old ones; TensorBoard reads them together.
#pragma once
#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "apps/training/tensorboard_events.hpp"

namespace attn::app {

class TensorBoardLog {
 public:
  explicit TensorBoardLog(std::string folder) : folder_(std::move(folder)) {}

  // Writes the scalars of a train, train_epoch or valid record of the training log (other records
  // have none).
  void write(const nlohmann::json& record);

 private:
  TensorBoardEventFile& run(const std::string& name);

  std::string folder_;
  std::map<std::string, std::unique_ptr<TensorBoardEventFile>> runs_;
};

}  // namespace attn::app
