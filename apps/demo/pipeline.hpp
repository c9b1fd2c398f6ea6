// `attnlab demo`: the teaching run end to end on the Ding EN→DE corpus (issue 4 "The
// demo"; docs/design.md §5–6). Stages, each writing into the output dir and skipped when its
// output is already there (so a rerun resumes where the last one stopped):
//   1 raw/        prepare ding (train / valid / test .en .de)
//   2 tok/        Moses tokenizer (docs/mt-tools.md §2)
//   3 bpe/codes   joint BPE, ~8k merges (§1.5)
//   4 bpe/        BPE applied to every split
//   5 data-bin/   joined dictionary + binarized splits (§4)
//   6 checkpoints/  transformer_tiny for --minutes of training (resumes a cut run)
//   7 checkpoints/checkpoint_avg  the last epoch checkpoints averaged (docs/models.md §1.11)
//   8 gen/        beam search on the test set (§1.10), BPE removed, detokenized
//   9 compare/     with --compare: every teaching variant for the same updates (variant_comparison.hpp)
// and finally prints sacreBLEU with its signature, tokenized BLEU, example translations
// beside their references, training throughput and peak memory, and writes them with the
// training curves and attention maps into report.html (demo_report.hpp).
#pragma once
#include <string>
#include <vector>

#include "apps/cli/compute_options.hpp"
#include "data/ding_corpus.hpp"

namespace attn::app {

struct DemoOptions {
  std::string out_dir = "attnlab-demo";
  double minutes = 10.0;  // training time
  ComputeOptions compute;  // --threads, --matmul-precision
  std::string ding_path = data::kDingDefaultPath;
  int64_t bpe_merges = 8000;
  int64_t beam = 5;
  int examples = 5;
  // --compare: every teaching variant trained for compare_updates updates (apps/demo/variant_comparison.hpp).
  bool compare = false;
  int64_t compare_updates = 600;
  std::vector<std::string> compare_only;  // variant names (empty: all)
};

// Runs every stage; returns the process exit code.
int run_demo(const DemoOptions& options);

}  // namespace attn::app
