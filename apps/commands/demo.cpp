// `attnlab demo [--out DIR] [--minutes M] [--threads N] [--matmul-precision fp32|bf16]`: the teaching run end to end
// (apps/demo/pipeline.hpp): Ding EN-DE → tokenize → joint BPE → binarize → train transformer_tiny →
// average → beam search → BLEU, examples, throughput and memory.
#include <memory>

#include "apps/cli/command.hpp"
#include "apps/demo/pipeline.hpp"
#include "core/matmul_precision.hpp"

namespace attn::app {
namespace {

CommandAction setup(CLI::App& cmd) {
  auto options = std::make_shared<DemoOptions>();
  cmd.add_option("--out", options->out_dir, "Output dir (kept; a rerun resumes)")->capture_default_str();
  cmd.add_option("--minutes", options->minutes, "Training time in minutes")->capture_default_str();
  // The demo is bounded by time: bf16 products (same loss curve per update, ~2x faster
  // GEMMs) are the default wherever the CPU has bfloat16 instructions.
  options->compute.matmul_precision = cpu_has_fast_bf16() ? "bf16" : "fp32";
  add_compute_options(cmd, options->compute);
  cmd.add_option("--ding", options->ding_path, "Ding dictionary file (package trans-de-en)")->capture_default_str();
  cmd.add_option("--bpe-merges", options->bpe_merges, "Joint BPE merges")->capture_default_str();
  cmd.add_option("--beam", options->beam, "Beam size")->check(positive_number())->capture_default_str();
  cmd.add_flag("--compare", options->compare,
               "Also train every teaching variant for --compare-updates and compare them in the report");
  cmd.add_option("--compare-updates", options->compare_updates, "Updates per variant with --compare")
      ->check(positive_number())
      ->capture_default_str();
  cmd.add_option("--compare-only", options->compare_only,
                 "Variants to compare (transformer, lightconv, dynamicconv, linformer, elu, rfa, t2r, t2r_finetuned, "
                 "decay; comma separated; default all)")
      ->delimiter(',');
  return [options] { return run_demo(*options); };
}

const CommandRegistration registration(
    "demo", "Train and evaluate a small EN-DE Transformer end to end (Ding corpus, ~10 minutes)", setup);

}  // namespace
}  // namespace attn::app
