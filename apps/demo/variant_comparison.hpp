// `attnlab demo --compare`: the teaching-scale version of the T2R paper's Table 2 (Kasai et al.
// 2021): every teaching-size variant trained on the demo's data for the same number of
// updates, then scored on the test set, with the training time, the decoding speed and the
// decoding state of one sentence. The variants:
//
//   transformer          transformer_tiny (softmax attention everywhere)
//   lightconv, dynamicconv   lightconv_tiny, dynamicconv_tiny (convolutions in place of self-attention)
//   linformer            linformer_tiny (compressed keys in the encoder and cross-attention)
//   elu, rfa, t2r        elu_tiny, rfa_tiny, t2r_tiny (kernelized decoder attention) from scratch
//   t2r (swap+finetune)  the comparison's trained transformer swapped to t2r_tiny (its weights
//                        kept, the feature maps new) and finetuned for the same budget
//   decay                decay_tiny (decaying fast weights in decoder self-attention)
//
// Each variant trains in DEMO/compare/<name>/ (resuming like any run), decodes into
// DEMO/compare/<name>/gen/; the table goes to DEMO/compare/table.md and table.json. A variant
// whose outputs are there already is not trained or decoded again.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "apps/report/report_page.hpp"
#include "apps/training/trainer.hpp"

namespace attn::app {

struct TeachingVariant {
  std::string name, arch;
  bool finetuned = false;  // swap-then-finetune from the comparison's transformer
};
const std::vector<TeachingVariant>& teaching_variants();

// What the demo's pipeline gives the comparison.
struct ComparisonSetup {
  std::string root;            // DEMO/compare
  TrainerOptions training;     // the demo's options (arch, save dir and budget are replaced)
  int64_t updates = 0;         // each variant's budget
  std::vector<std::string> only;  // variant names to run (empty: all)
  // Decodes the test set with a checkpoint into gen_dir and scores it.
  struct Scored {
    double bleu = 0, seconds = 0;
    int64_t tokens = 0;  // target tokens generated
  };
  std::function<Scored(const std::string& checkpoint, const std::string& gen_dir)> score_test_set;
  // A sentence pair (raw) whose maps each variant shows.
  std::string source, reference;
};

struct VariantResult {
  std::string name, arch;
  int64_t parameters = 0, updates = 0;
  double bleu = 0, train_minutes = 0, decode_tokens_per_second = 0;
  int64_t state_bytes = 0;  // decoding state of one sentence: 20 source tokens, 50 target tokens
  std::string checkpoint;
};

std::vector<VariantResult> compare_variants(const ComparisonSetup& setup);

// The table for the report (and table.md / table.json, written by compare_variants).
ReportTable comparison_table(const std::vector<VariantResult>& results, int64_t updates);
// Each variant's maps of the setup's sentence pair side by side: one group per place (last
// layer, head 1 of each variant).
ReportAttention comparison_maps(const std::vector<VariantResult>& results, const ComparisonSetup& setup);

}  // namespace attn::app
