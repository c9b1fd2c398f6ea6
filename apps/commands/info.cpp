// `attnlab info`: what this build runs on — threads and their wait policy, the BLAS and
// GEMM libraries in use, whether bf16 matrix products are fast here, CUDA devices, and
// the allocator's statistics. The first thing to paste into a bug report.
// `attnlab info --arch NAME [--vocab V] [--share-all-embeddings] [--model-override k=v]`
// builds that model and prints its parameter count by group instead.
#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "apps/cli/command.hpp"
#include "core/allocator.hpp"
#include "core/device_runtime.hpp"
#include "core/matmul_precision.hpp"
#include "core/threads.hpp"
#include "nn/parameter_summary.hpp"
#include "nn/transformer/encoder_decoder_model.hpp"

namespace attn::app {
namespace {

std::string environment_value(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "unset";
}

struct InfoArgs {
  std::string arch;
  int64_t vocab = 32768;
  bool share_all_embeddings = false;
  std::vector<std::string> model_overrides;
};

int run_model_summary(const InfoArgs& args) {
  nn::TransformerConfig config = nn::transformer_preset(args.arch);
  config.src_vocab_size = config.tgt_vocab_size = args.vocab;
  config.share_all_embeddings = args.share_all_embeddings;
  nn::apply_overrides(config, args.model_overrides);
  const nn::EncoderDecoderModel model(config);
  fmt::print("{}: {} parameters (vocabulary {}{})\n", args.arch, model.num_parameters(), args.vocab,
             args.share_all_embeddings ? ", shared embeddings" : "");
  for (const nn::ParameterGroup& group : nn::parameter_summary(model))
    fmt::print("  {:<28} {:>12}\n", group.name, group.count);
  return 0;
}

void print_cuda_devices() {
  const DeviceRuntime* cuda = device_runtime(DeviceType::CUDA);
  if (cuda == nullptr) {
    fmt::print("cuda: not built (configure with -DATTNLAB_CUDA=ON)\n");
    return;
  }
  const std::string problem = cuda->unavailable_reason();
  if (!problem.empty()) {
    fmt::print("cuda: built in ({}) but not usable: {}\n", cuda->versions(), problem);
    return;
  }
  const int n = cuda->device_count();
  fmt::print("cuda: usable ({}); {} device(s)\n", cuda->versions(), n);
  for (int i = 0; i < n; ++i) fmt::print("  cuda:{} {}\n", i, cuda->device_name(i));
}

int run_info() {
  fmt::print("threads: {} (OpenMP; OpenBLAS and oneDNN share the pool); OMP_WAIT_POLICY {}, GOMP_SPINCOUNT {}\n",
             get_num_threads(), environment_value("OMP_WAIT_POLICY"), environment_value("GOMP_SPINCOUNT"));
  fmt::print("blas: {} (core {}, parallel mode {})\n", openblas_get_config(), openblas_get_corename(),
             openblas_get_parallel() == 2 ? "OpenMP" : openblas_get_parallel() == 1 ? "pthreads" : "sequential");
  const dnnl_version_t* dnnl = dnnl_version();
  fmt::print("gemm: large float32 products via oneDNN {}.{}.{}; bf16 matmul precision {}\n", dnnl->major,
             dnnl->minor, dnnl->patch, cpu_has_fast_bf16() ? "available (AVX512-BF16)" : "not available on this CPU");
  print_cuda_devices();
  AllocatorStats s = allocator_for(Device::cpu()).stats();
  fmt::print("cpu allocator: {:.1f} KiB in use, peak {:.1f} KiB, {} allocations\n", double(s.current_bytes) / 1024,
             double(s.peak_bytes) / 1024, s.num_allocs);
  return 0;
}

CommandAction setup(CLI::App& cmd) {
  auto args = std::make_shared<InfoArgs>();
  CLI::Option* arch = cmd.add_option("--arch", args->arch, "Print this model preset's parameter count instead")
                          ->check(not_empty("name a preset; `attnlab train --help` lists them"));
  // The model's flags mean nothing without a model: refused rather than ignored.
  cmd.add_option("--vocab", args->vocab, "Vocabulary size for --arch")
      ->check(positive_number())
      ->capture_default_str()
      ->needs(arch);
  cmd.add_flag("--share-all-embeddings", args->share_all_embeddings, "With --arch: one embedding matrix")->needs(arch);
  cmd.add_option("--model-override", args->model_overrides, "With --arch: any config field, key=value (repeatable)")
      ->needs(arch);
  return [args]() { return args->arch.empty() ? run_info() : run_model_summary(*args); };
}

CommandRegistration info_command("info", "Show threads, BLAS, CUDA devices and memory; or a model's size (--arch)",
                                 setup);

}  // namespace
}  // namespace attn::app
