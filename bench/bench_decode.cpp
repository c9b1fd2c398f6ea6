// Greedy incremental decoding speed and attention-state size against output length (issue
// "Attention variants II"): the same work the PyTorch anchor `torch_decode.py` times — base
// size (d 512, 8 heads, FFN 2048, 6 encoder and 6 decoder layers), vocabulary 8,000, shared
// embeddings, batch 16, beam 1, random weights and source tokens, source length = output
// length L, and every step decoded (no early end of sentence). Models:
//
//   softmax  softmax attention everywhere, K/V cache (grows with L)
//   t2r      T2R in the decoder: causal self-attention with 4 features, cross with 32
//   elu      ELU+1 linear attention in the decoder (64 features = head dim)
//   rfa      RFA in the decoder, 4 / 32 random features (φ of 8 / 64)
//   decay    decaying fast weights in decoder self-attention (64 × 64 state per head), ELU+1
//            cross-attention
//
// Reports decode tokens/s = B·L / (decoder state set-up + L steps), the encoder's time
// separately, the mean of the last 16 steps, and the attention state in bytes after the last
// step (every layer's self- and cross-attention state: MixerState::size_bytes).
//
// Usage: bench_decode [--models softmax,t2r,elu,rfa,decay] [--lengths 16,64,256,1024,2048]
//                     [--threads N] [--batch B] [--reps N (0: 5/3/2/1 by length, as the anchor)]
//                     [--kernels 1]   (then also the time per backend kernel of one more decode)
//                     [--device cpu|cuda[:N]]  (on a GPU the host waits for the device after the
//                                               encoder and after every step, so the times are the device's)
#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "apps/cli/runtime_environment.hpp"
#include "autograd/autograd.hpp"
#include "bench_args.hpp"
#include "bench_device.hpp"
#include "kernel_times.hpp"
#include "core/backend.hpp"
#include "core/ops.hpp"
#include "core/threads.hpp"
#include "nn/transformer/encoder_decoder_model.hpp"

namespace {

using namespace attn;
using Clock = std::chrono::steady_clock;

constexpr int64_t kVocab = 8000;

nn::TransformerConfig model_config(const std::string& model) {
  nn::TransformerConfig c = nn::transformer_preset("transformer_wmt_en_de");
  c.src_vocab_size = c.tgt_vocab_size = kVocab;
  c.share_all_embeddings = true;
  c.max_source_positions = c.max_target_positions = 4096;
  c.causal_proj_dim = 4;
  c.cross_proj_dim = 32;
  if (model == "t2r" || model == "elu" || model == "rfa") c.decoder_self_mixer = c.cross_mixer = "kernel:" + model + "+additive";
  else if (model == "decay") {
    c.decoder_self_mixer = "kernel:identity+decay";
    c.cross_mixer = "kernel:elu+additive";
  } else ATTN_CHECK(model == "softmax", "bench_decode: unknown model '{}' (softmax, t2r, elu, rfa, decay)", model);
  return c;
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

struct Run {
  double encoder_s, decode_s, last_step_s;
  int64_t state_bytes;
};

// Encodes the sources, then decodes L tokens greedily, on the sources' device.
Run decode_once(nn::EncoderDecoderModel& model, const Tensor& sources, int64_t length) {
  Backend& backend = backend_for(sources.device());
  Run run{};
  auto start = Clock::now();
  const nn::EncoderOutput encoded = model.encode(sources);
  backend.synchronize();
  run.encoder_s = seconds_since(start);
  start = Clock::now();
  nn::DecoderState state = model.init_decoder_state(encoded);
  Tensor tokens = full({sources.size(0)}, double(model.config().eos_idx), DType::Int64, sources.device());
  std::vector<double> steps;
  for (int64_t t = 0; t < length; ++t) {
    const auto step_start = Clock::now();
    tokens = ops::argmax(model.decode_step(tokens, state), -1);
    backend.synchronize();
    steps.push_back(seconds_since(step_start));
  }
  run.decode_s = seconds_since(start);
  const size_t tail = std::min<size_t>(16, steps.size());
  for (size_t i = steps.size() - tail; i < steps.size(); ++i) run.last_step_s += steps[i] / double(tail);
  run.state_bytes = state.attention_bytes();
  return run;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  attn::app::prepare_runtime_environment(argv);  // the OpenBLAS kernels and OpenMP waits attnlab itself runs with
  try {
    bench::BenchArgs args("bench_decode", argc, argv);
    const std::vector<std::string> models = args.list("models", {"softmax", "t2r", "elu", "rfa", "decay"});
    const std::vector<int64_t> lengths = args.numbers("lengths", {16, 64, 256, 1024, 2048});
    const int threads = int(args.number("threads", 2));
    const int64_t batch = args.number("batch", 16), fixed_reps = args.number("reps", 0);
    const bool kernels = args.number("kernels", 0) != 0;
    const std::string device_name = args.text("device", "cpu");
    args.check_all_used();
    const Device device = bench::use_bench_device(device_name);
    set_num_threads(threads);
    NoGradGuard no_grad;
    fmt::print("{:<8} {:>5} {:>4} {:>12} {:>8} {:>13} {:>10}   (B {}, {}, greedy, base size)\n", "model", "L",
               "reps", "decode tok/s", "enc s", "last step ms", "state MiB", batch,
               device.is_cpu() ? fmt::format("{} threads", threads) : device.str());
    for (int64_t length : lengths)
      for (const std::string& name : models) {
        manual_seed(0);
        nn::EncoderDecoderModel model(model_config(name));
        model.eval();
        model.to(device);
        Generator gen(1);
        const Tensor sources = ops::add(ops::mul(uniform({batch, length}, 0, 1, DType::Float32, &gen), double(kVocab - 4)), 4.0)
                                   .to(DType::Int64)
                                   .to(device);
        decode_once(model, sources.narrow(1, 0, std::min<int64_t>(16, length)), 16);  // warm-up
        const int64_t reps = fixed_reps > 0 ? fixed_reps : length <= 64 ? 5 : length <= 256 ? 3 : length <= 1024 ? 2 : 1;
        std::vector<double> encoder, decode, last;
        int64_t bytes = 0;
        for (int64_t r = 0; r < reps; ++r) {
          const Run run = decode_once(model, sources, length);
          encoder.push_back(run.encoder_s);
          decode.push_back(run.decode_s);
          last.push_back(run.last_step_s);
          bytes = run.state_bytes;
        }
        if (kernels) bench::print_kernel_times([&] { decode_once(model, sources, length); });
        const double tokens_per_s = double(batch * length) / median(decode);
        fmt::print("{:<8} {:>5} {:>4} {:>12.0f} {:>8.3f} {:>13.2f} {:>10.2f}\n", name, length, reps, tokens_per_s,
                   median(encoder), 1e3 * median(last), double(bytes) / (1 << 20));
        fmt::print(stderr,
                   "{{\"model\": \"{}\", \"device\": \"{}\", \"L\": {}, \"B\": {}, \"threads\": {}, \"decode_tok_s\": {:.1f}, "
                   "\"encoder_s\": {:.4f}, \"last_step_ms\": {:.3f}, \"state_bytes\": {}}}\n",
                   name, device.str(), length, batch, threads, tokens_per_s, median(encoder), 1e3 * median(last), bytes);
      }
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_decode: {}\n", e.what());
    return 1;
  }
}
