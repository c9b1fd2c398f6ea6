// Training throughput through attnlab's own training path (issue 4 "Benchmarks"): a
// binarized synthetic corpus → the batch loader → apps/trainer's train_step (forward,
// label-smoothed CE ε = 0.1, backward, normalisation, clipping norm, Adam) with the
// configurations of the PyTorch 1.13 reference runs: batches of 128 sentences × 32 tokens
// (4,096 target tokens), vocabulary 8,000, all embeddings tied, dropout as the preset.
// Reports target tokens/s, the phase split (forward / backward / optimizer), the GEMM
// share (core/profiler.hpp, from separately profiled steps) and peak memory (allocator
// peak and peak RSS). bench_step_profile times the bare model step without the trainer.
//
// Usage: bench_train [--model tiny,base,PRESET...] [--override key=value ...] [--threads N] [--steps N]
//                    [--warmup N] [--sentences N]  (sentences of 32 tokens per batch, default 128)
//                    [--kernels device|host]  (then also the time per backend kernel of one more step:
//                                              its run on the device, or the host's part of each call)
//                    [--device cpu|cuda[:N]]  (on a GPU: tokens/s and peak device memory; the phase
//                                              split and GEMM share are CPU-only figures)
// --model takes tiny (transformer_tiny), base (transformer_wmt_en_de) or any preset (t2r_tiny,
// lightconv_tiny, ...); --override changes any config field of every model, e.g. the base
// model with T2R in the decoder: --model base --override decoder_self_mixer=kernel:t2r+additive
// --override cross_mixer=kernel:t2r+additive.

#include <chrono>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "apps/cli/runtime_environment.hpp"
#include "apps/training/peak_memory.hpp"
#include "apps/training/trainer.hpp"
#include "bench_args.hpp"
#include "bench_device.hpp"
#include "kernel_times.hpp"
#include "core/allocator.hpp"
#include "core/profiler.hpp"
#include "data/binarized_corpus.hpp"

namespace {

using namespace attn;
using Clock = std::chrono::steady_clock;

constexpr int64_t kCorpusSentences = 512, kLength = 32, kVocab = 8000;

struct Options {
  std::vector<std::string> models, overrides;
  int threads, steps, warmup;
  int64_t sentences;
  std::string kernels;  // "none", "device" or "host"
  std::string device;
};

Options parse(int argc, char** argv) {
  bench::BenchArgs args("bench_train", argc, argv);
  Options o{args.list("model", {"tiny", "base"}), args.list("override", {}), int(args.number("threads", 2)),
            int(args.number("steps", 5)), int(args.number("warmup", 2)), args.number("sentences", 128),
            args.text("kernels", "none"), args.text("device", "cpu")};
  args.check_all_used();
  ATTN_CHECK(o.kernels == "none" || o.kernels == "device" || o.kernels == "host",
             "bench_train: --kernels takes device or host, got '{}'", o.kernels);
  ATTN_CHECK(o.sentences > 0 && o.sentences <= kCorpusSentences, "bench_train: --sentences takes 1 to {}, got {}",
             kCorpusSentences, o.sentences);
  return o;
}

// kCorpusSentences pairs of 31 random words + </s>, a kVocab-symbol dictionary.
std::string write_corpus() {
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("attnlab_bench_train_{}", ::getpid());
  std::filesystem::create_directories(dir);
  data::Dictionary dict;
  for (int64_t w = data::Dictionary::kNumSpecial; w < kVocab; ++w) dict.add_symbol(fmt::format("w{}", w));
  for (const char* lang : {"src", "tgt"}) dict.save((dir / fmt::format("dict.{}.txt", lang)).string());
  std::mt19937 rng(1);
  for (const char* split : {"train", "valid"})
    for (const char* lang : {"src", "tgt"}) {
      std::vector<std::vector<int32_t>> sentences(size_t{kCorpusSentences}, std::vector<int32_t>(kLength));
      for (auto& s : sentences) {
        for (auto& id : s) id = int32_t(data::Dictionary::kNumSpecial + rng() % (kVocab - data::Dictionary::kNumSpecial));
        s.back() = data::Dictionary::kEos;
      }
      data::write_binarized_corpus(data::binarized_path(dir.string(), split, "src", "tgt", lang), sentences, dict);
    }
  return dir.string();
}

app::TrainerOptions trainer_options(const std::string& model, const Options& options, const std::string& data_dir) {
  app::TrainerOptions o;
  o.data_dir = data_dir;
  o.save_dir = data_dir + "/checkpoints-" + model;
  o.arch = model == "tiny" ? "transformer_tiny" : model == "base" ? "transformer_wmt_en_de" : model;
  o.model_overrides = {"share_all_embeddings=true"};
  o.model_overrides.insert(o.model_overrides.end(), options.overrides.begin(), options.overrides.end());
  o.label_smoothing = 0.1;
  o.adam_beta2 = 0.98;
  o.lr_scheduler = "inverse_sqrt";
  o.lr = {5e-4};
  o.warmup_updates = 4000;
  o.max_tokens = options.sentences * kLength;
  o.compute.threads = options.threads;
  o.compute.device = options.device;
  o.progress = app::ProgressMode::kQuiet;
  return o;
}

void run(const std::string& model, const std::string& data_dir, const Options& options, Device device) {
  app::Trainer trainer(trainer_options(model, options, data_dir));
  const app::SplitCorpora corpora = app::open_split(trainer.task(), "train");
  data::BatchingOptions batching;
  batching.max_tokens = options.sentences * kLength;
  data::BatchLoader loader(corpora.source, corpora.target, batching);
  auto next_batch = [&] {
    std::optional<data::Batch> batch = loader.next();
    return batch ? *batch : *loader.next();
  };
  for (int i = 0; i < options.warmup; ++i) trainer.train_step({next_batch()});
  allocator_for(device).reset_peak();

  int64_t tokens = 0;
  const auto start = Clock::now();
  for (int i = 0; i < options.steps; ++i) tokens += trainer.train_step({next_batch()}).ntokens;  // reads the loss back
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  fmt::print("{} ({} parameters), {} on {}, {} steps of {} target tokens\n", model, trainer.model().num_parameters(),
             device.is_cpu() ? fmt::format("{} thread(s)", options.threads) : "the GPU", device.str(),
             options.steps, tokens / options.steps);
  const app::PeakMemory peak = app::peak_memory(device);
  fmt::print("  {:.0f} target tokens/s ({:.1f} ms per step)   peak tensor memory {:.0f} MiB   peak RSS {:.0f} MiB\n",
             double(tokens) / seconds, 1e3 * seconds / options.steps,
             peak.tensor_mib, peak.resident_mib);
  if (!device.is_cpu()) {
    // --kernels device: each kernel's time on the GPU (between events queued around it);
    // host: the host's part of each call, and its waits for the device.
    if (options.kernels != "none")
      bench::print_kernel_times([&] { trainer.train_step({next_batch()}); },
                                options.kernels == "device" ? profiler::KernelTiming::device
                                                            : profiler::KernelTiming::host);
    return;
  }

  profiler::reset();
  profiler::set_enabled(true);
  trainer.train_step({next_batch()});
  profiler::set_enabled(false);
  const std::vector<profiler::Entry> profile = profiler::snapshot();
  double step = 0.0, gemm = 0.0;
  for (const auto& e : profile) {
    if (e.name.starts_with("trainer:")) step += e.seconds;
    if (e.name.find("gemm") != std::string::npos) gemm += e.seconds;
  }
  for (const auto& e : profile)
    if (e.name.starts_with("trainer:"))
      fmt::print("  {:<45} {:8.1f} ms  {:5.1f}%\n", e.name, 1e3 * e.seconds, 100.0 * e.seconds / step);
  fmt::print("  GEMM (all matmul kernels)                     {:8.1f} ms  {:5.1f}%\n", 1e3 * gemm, 100.0 * gemm / step);
  if (options.kernels != "none") bench::print_kernel_times([&] { trainer.train_step({next_batch()}); });
}

// The synthetic corpus's folder, removed however the benchmark ends.
struct CorpusDir {
  std::string path = write_corpus();
  ~CorpusDir() { std::filesystem::remove_all(path); }
};

}  // namespace

int main(int argc, char** argv) {
  attn::app::prepare_runtime_environment(argv);  // the OpenBLAS kernels and OpenMP waits attnlab itself runs with
  try {
    const Options options = parse(argc, argv);
    const Device device = bench::use_bench_device(options.device);  // once, before any trainer asks for it
    const CorpusDir corpus;
    for (const std::string& model : options.models) run(model, corpus.path, options, device);
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_train: {}\n", e.what());
    return 1;
  }
  return 0;
}
