// Training-step profile (issue 4, "Benchmarks"): target tokens/s of one full Transformer
// training step — forward, label-smoothed cross entropy (ε = 0.1), backward, gradient
// normalisation and norm, Adam — on random batches of 128 sentences × 32 tokens, vocabulary
// 8,000 with all embeddings tied (docs/models.md §1.1–1.7), and where the time goes:
//
//   * the split forward (model + criterion) / backward / optimizer (the scaled gradient norm,
//     Adam step with the scale, zero_grad), timed around each phase;
//   * the process CPU time per step (load-independent at 1 thread);
//   * with --kernels, the time in each backend kernel (core/profiler.hpp), GEMM first, and
//     the rest of each phase (allocation, autograd bookkeeping, Adam's own loops).
//
// Usage: bench_step_profile [--model tiny|base|both] [--threads N] [--steps N] [--warmup N]
//                           [--kernels] [--matmul-precision fp32|bf16]
// The kernel profile adds a clock read per kernel call; the tokens/s figures of the same run
// are taken from the unprofiled steps only.
#include <fmt/core.h>

#include <time.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "apps/cli/runtime_environment.hpp"
#include "apps/training/peak_memory.hpp"
#include "core/allocator.hpp"
#include "core/backend.hpp"
#include "core/matmul_precision.hpp"
#include "core/profiler.hpp"
#include "core/threads.hpp"
#include "nn/adam.hpp"
#include "nn/criterion.hpp"
#include "nn/grad_clip.hpp"
#include "nn/transformer/encoder_decoder_model.hpp"

namespace {

using namespace attn;
using Clock = std::chrono::steady_clock;

constexpr int64_t kSentences = 128, kLength = 32, kVocab = 8000;

struct Options {
  std::vector<std::string> models{"tiny", "base"};
  int threads = 2, steps = 5, warmup = 2;
  bool kernels = false;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      ATTN_CHECK(i + 1 < argc, "bench_step_profile: {} needs a value", arg);
      return argv[++i];
    };
    if (arg == "--model") {
      const std::string m = value();
      ATTN_CHECK(m == "tiny" || m == "base" || m == "both", "bench_step_profile: --model tiny|base|both, got '{}'", m);
      o.models = m == "both" ? std::vector<std::string>{"tiny", "base"} : std::vector<std::string>{m};
    } else if (arg == "--threads") {
      o.threads = std::stoi(value());
    } else if (arg == "--steps") {
      o.steps = std::stoi(value());
    } else if (arg == "--warmup") {
      o.warmup = std::stoi(value());
    } else if (arg == "--kernels") {
      o.kernels = true;
    } else if (arg == "--matmul-precision") {
      set_matmul_precision(parse_matmul_precision(value()));
    } else {
      throw Error(fmt::format("bench_step_profile: unknown argument '{}' (see the header comment)", arg));
    }
  }
  ATTN_CHECK(o.steps >= 1 && o.warmup >= 0, "bench_step_profile: need --steps >= 1 and --warmup >= 0");
  return o;
}

// tiny-like: D 256, F 1024, H 4, 3+3 layers; base: transformer_wmt_en_de (D 512, F 2048, H 8, 6+6).
nn::TransformerConfig model_config(const std::string& name) {
  nn::TransformerConfig c = nn::transformer_preset(name == "tiny" ? "transformer_tiny" : "transformer_wmt_en_de");
  c.src_vocab_size = c.tgt_vocab_size = kVocab;
  c.share_all_embeddings = true;
  c.share_decoder_input_output_embed = true;
  return c;
}

// Token ids drawn uniformly from the non-special symbols (fairseq: 0-3 are specials).
Tensor random_tokens(uint64_t seed) {
  Tensor ids({kSentences, kLength}, DType::Float32);
  backend_for(ids.device()).uniform(ids, 4.0, double(kVocab), seed, 0);
  return ops::unary(UnaryOp::Clamp, ids, {4.0, double(kVocab - 1)}).to(DType::Int64);
}

struct Batch {
  Tensor src, prev_output, target;
};

// prev_output = </s> y_1 … y_{n−1}: the target shifted right by one (docs/models.md §1.1).
Batch random_batch(const nn::TransformerConfig& c) {
  Batch b;
  b.src = random_tokens(1);
  b.target = random_tokens(2);
  b.prev_output = b.target.clone();
  b.prev_output.narrow(1, 1, kLength - 1).copy_(b.target.narrow(1, 0, kLength - 1));
  b.prev_output.narrow(1, 0, 1).fill_(double(c.eos_idx));
  return b;
}

// CPU time of the whole process: at 1 thread, tokens per CPU-second hardly depends on what
// else runs on the machine (wall time does); at 2 threads it includes OpenMP's spin-waiting.
double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

struct PhaseTimes {
  double forward = 0, backward = 0, optimizer = 0;
  double total() const { return forward + backward + optimizer; }
};

struct Trainee {
  nn::EncoderDecoderModel model;
  nn::LabelSmoothedCrossEntropy criterion;
  std::vector<Tensor> params;
  nn::Adam adam;

  explicit Trainee(const nn::TransformerConfig& c)
      : model(c), criterion(0.1, c.padding_idx), params(model.parameters()), adam(model.named_parameters(), adam_options()) {
    adam.set_lr(1e-4);
    model.train();
  }

  static nn::AdamOptions adam_options() {
    nn::AdamOptions o;
    o.beta2 = 0.98;
    return o;
  }

  // One update, as apps/training/trainer.cpp does it, timed per phase.
  PhaseTimes step(const Batch& b) {
    PhaseTimes t;
    auto t0 = Clock::now();
    nn::CriterionOutput out;
    {
      profiler::ProfileScope scope("phase: forward");
      out = criterion(model.forward(b.src, b.prev_output), b.target);
    }
    auto t1 = Clock::now();
    {
      profiler::ProfileScope scope("phase: backward");
      backward(out.loss);
    }
    auto t2 = Clock::now();
    {
      profiler::ProfileScope scope("phase: optimizer");
      adam.step(nn::scaled_grad_norm(params, 1.0 / double(out.ntokens), 0.0).factor);
      adam.zero_grad();
    }
    auto t3 = Clock::now();
    auto seconds = [](auto a, auto z) { return std::chrono::duration<double>(z - a).count(); };
    return {seconds(t0, t1), seconds(t1, t2), seconds(t2, t3)};
  }
};

void print_kernel_profile(const std::vector<profiler::Entry>& entries, int steps) {
  double phases = 0, kernels = 0, gemm = 0;
  for (const auto& e : entries) {
    if (e.name.rfind("phase: ", 0) == 0) phases += e.seconds;
    else kernels += e.seconds;
    if (e.name == "batched_gemm") gemm = e.seconds;
  }
  fmt::print("  kernel profile (per step; inclusive wall time)\n");
  for (const auto& e : entries)
    fmt::print("    {:<28} {:8.1f} ms {:6.1f}%  {:7.0f} calls\n", e.name, 1e3 * e.seconds / steps,
               100.0 * e.seconds / phases, double(e.calls) / steps);
  fmt::print("  GEMM {:.1f}% of the step, other kernels {:.1f}%, outside kernels {:.1f}%\n", 100.0 * gemm / phases,
             100.0 * (kernels - gemm) / phases, 100.0 * (phases - kernels) / phases);
}

void run_model(const std::string& name, const Options& o) {
  manual_seed(1);
  const nn::TransformerConfig config = model_config(name);
  Trainee trainee(config);
  const Batch batch = random_batch(config);
  for (int i = 0; i < o.warmup; ++i) trainee.step(batch);

  allocator_for(Device::cpu()).reset_peak();
  const double cpu_start = process_cpu_seconds();
  PhaseTimes sum;
  for (int i = 0; i < o.steps; ++i) {
    PhaseTimes t = trainee.step(batch);
    sum.forward += t.forward;
    sum.backward += t.backward;
    sum.optimizer += t.optimizer;
  }
  const double cpu_per_step = (process_cpu_seconds() - cpu_start) / o.steps;
  const double tokens = double(kSentences * kLength), per_step = sum.total() / o.steps;
  fmt::print("{} ({} parameters), {} thread(s), {} steps of {} target tokens, {} matrix products\n", name,
             trainee.model.num_parameters(), o.threads, o.steps, int64_t(tokens), to_string(matmul_precision()));
  fmt::print("  {:.0f} tokens/s   step {:.1f} ms = forward {:.1f} + backward {:.1f} + optimizer {:.1f}"
             "   peak tensor memory {:.0f} MiB\n",
             tokens / per_step, 1e3 * per_step, 1e3 * sum.forward / o.steps, 1e3 * sum.backward / o.steps,
             1e3 * sum.optimizer / o.steps, app::peak_memory(Device::cpu()).tensor_mib);
  fmt::print("  CPU time {:.1f} ms/step ({:.2f} cores busy; {:.0f} tokens per CPU-second)\n", 1e3 * cpu_per_step,
             cpu_per_step / per_step, tokens / cpu_per_step);

  if (!o.kernels) return;
  profiler::reset();
  profiler::set_enabled(true);
  for (int i = 0; i < o.steps; ++i) trainee.step(batch);
  profiler::set_enabled(false);
  print_kernel_profile(profiler::snapshot(), o.steps);
}

}  // namespace

int main(int argc, char** argv) {
  attn::app::prepare_runtime_environment(argv);  // the OpenBLAS kernels and OpenMP waits attnlab itself runs with
  try {
    const Options o = parse(argc, argv);
    set_num_threads(o.threads);
    for (const std::string& m : o.models) run_model(m, o);
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_step_profile: {}\n", e.what());
    return 1;
  }
  return 0;
}
