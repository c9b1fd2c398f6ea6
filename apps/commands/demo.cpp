// `attnlab demo [--out DIR] [--max-update N] [--threads N] [--matmul-precision fp32|bf16]`: the teaching run end to end
// (apps/demo/pipeline.hpp): Ding EN-DE → tokenize → joint BPE → binarize → train dynamicconv_mini →
// average → beam search → BLEU, examples, throughput and memory (also in DIR/summary.json).
#include <memory>

#include "apps/cli/command.hpp"
#include "apps/demo/pipeline.hpp"
#include "apps/demo/variant_comparison.hpp"
#include "core/device_runtime.hpp"
#include "core/matmul_precision.hpp"

namespace attn::app {
namespace {

CommandAction setup_demo(CLI::App& cmd) {
  auto options = std::make_shared<DemoOptions>();
  cmd.add_option("--out", options->out_dir, "Output dir (kept; a rerun resumes)")->capture_default_str();
  cmd.add_option("--max-update", options->max_update,
                 "Training updates (a fixed budget: the same numbers on every run; ~10 minutes on 2 cores)")
      ->check(positive_number())
      ->capture_default_str();
  // bf16 products (same loss curve per update, ~2x faster GEMMs) are the default wherever they
  // are fast: on a CPU with bfloat16 instructions, and on a GPU (every one the CUDA build
  // targets has bf16 tensor cores). The same budget then takes about half the time.
  options->compute.matmul_precision = cpu_has_fast_bf16() ? "bf16" : "fp32";
  add_compute_options(cmd, options->compute);
  const CLI::Option* precision_flag = cmd.get_option("--matmul-precision");
  cmd.add_option("--ding", options->ding_path, "Ding dictionary file (package trans-de-en)")->capture_default_str();
  cmd.add_option("--dictionary-entries", options->dictionary_entries,
                 "Word and phrase entries of the dictionary added to train (a seeded subset; valid/test stay sentences)")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd.add_option("--bpe-merges", options->bpe_merges, "Joint BPE merges")->check(positive_number())->capture_default_str();
  cmd.add_option("--dropout", options->dropout,
                 "Dropout of the demo's model (more for a larger --max-update: 0.2 for 18000 updates)")
      ->check(number_in_range(0.0, 0.9))
      ->capture_default_str();
  cmd.add_option("--weight-decay", options->weight_decay,
                 "Decoupled weight decay of the demo's training (0: none)")
      ->check(number_in_range(0.0, 1.0))
      ->capture_default_str();
  cmd.add_option("--beam", options->beam, "Beam size")->check(positive_number())->capture_default_str();
  cmd.add_option("--knn-lambda", options->knn_lambda,
                 "kNN-MT on the test set: weight of the training pairs' nearest decoder states (0: plain beam search)")
      ->check(number_in_range(0.0, 1.0))
      ->capture_default_str();
  CLI::Option* compare_flag = cmd.add_flag(
      "--compare", options->compare, "Also train every teaching variant for --compare-updates and compare them in the report");
  cmd.add_option("--compare-updates", options->compare_updates, "Updates per variant with --compare")
      ->check(positive_number())
      ->needs(compare_flag)
      ->capture_default_str();
  // Checked here, not after the demo's ten minutes of training.
  std::vector<std::string> variant_names;
  for (const TeachingVariant& variant : teaching_variants()) variant_names.push_back(variant.name);
  cmd.add_option("--compare-only", options->compare_only, "Variants to compare with --compare (comma separated; default all)")
      ->delimiter(',')
      ->check(CLI::IsMember(variant_names))
      ->needs(compare_flag);
  return [options, precision_flag] {
    if (precision_flag->count() == 0 && !parse_device(options->compute.device).is_cpu())
      options->compute.matmul_precision = "bf16";
    run_demo(*options);
    return 0;
  };
}

const CommandRegistration demo_command(
    "demo", "Train and evaluate a small EN-DE model end to end (Ding corpus; minutes on 2 cores)", setup_demo);

}  // namespace
}  // namespace attn::app
