// One sequence-mixing layer's forward + backward time against sequence length (issue
// "Attention variants I"): B = 8 sentences of T tokens, d = 512, non-causal self-mixing, the
// same work as the PyTorch anchor script `torch_layers.py` times (run it beside this one and
// compare in the same session, bench/README.md "Layers"):
//
//   mha          softmax attention, 8 heads
//   linformer    Linformer, 8 heads, k = 64, E/F over T positions (max_seq_len = T)
//   lightconv    GLU → LightConv (16 heads, K = 31, softmax taps, centred) → Linear
//   dynamicconv  GLU → DynamicConv (16 heads, K = 31) → Linear
//   linear_causal  causal linear attention, ELU+1 features, 8 heads (kernel:elu+additive, the scan)
//   linear       the same, non-causal (S and z summed once)
//   ffn          the position-wise FFN 512-2048-512, for reference
//
// Each layer includes its own input/output projections. Reports the median of --repeats
// timed iterations after one warm-up, in ms, and one JSON line per (layer, T).
//
// Usage: bench_layers [--layers mha,linformer,...] [--T 128,512,2048] [--threads N] [--repeats N]
//                     [--kernels 1]   (then also the time per backend kernel of one more iteration)
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "apps/cli/runtime_environment.hpp"
#include "bench_args.hpp"
#include "kernel_times.hpp"
#include "core/threads.hpp"
#include "nn/layers/feed_forward.hpp"
#include "nn/mixers/mixer_registry.hpp"

namespace {

using namespace attn;
constexpr int64_t kBatch = 8, kDim = 512;

struct Options {
  std::vector<std::string> layers;
  std::vector<int64_t> lengths;
  int threads, repeats;
  bool kernels;
};

Options parse(int argc, char** argv) {
  bench::BenchArgs args("bench_layers", argc, argv);
  Options o{args.list("layers", {"mha", "linformer", "lightconv", "dynamicconv", "linear_causal", "linear", "ffn"}),
            args.numbers("T", {128, 512, 2048}), int(args.number("threads", 2)), int(args.number("repeats", 5)),
            args.number("kernels", 0) != 0};
  args.check_all_used();
  return o;
}

// The layer as a function x -> y, with its parameters alive inside.
std::function<Tensor(const Tensor&)> make_layer(const std::string& name, int64_t length) {
  if (name == "ffn") {
    auto ffn = std::make_shared<nn::FeedForward>(kDim, 4 * kDim, 0.0, nn::LinearInit::Xavier);
    return [ffn](const Tensor& x) { return ffn->forward(x, true); };
  }
  nn::MixerOptions o;
  o.embed_dim = kDim;
  o.num_heads = 8;
  if (name == "mha") o.kind = "softmax";
  else if (name == "linformer") {
    o.kind = "linformer";
    o.linformer.max_seq_len = length;
    o.linformer.k = 64;
  } else if (name == "lightconv" || name == "dynamicconv") {
    o.kind = name;
    o.num_heads = 16;
    o.conv.kernel_size = 31;
    o.conv.input_dropout = 0.0;
  } else if (name == "linear_causal" || name == "linear") {
    o.kind = "kernel:elu+additive";
  } else {
    throw Error(fmt::format(
        "bench_layers: unknown layer '{}' (mha, linformer, lightconv, dynamicconv, linear_causal, linear, ffn)", name));
  }
  std::shared_ptr<nn::TokenMixer> mixer = nn::create_mixer(o);
  nn::MixerContext ctx;
  ctx.causal = name == "linear_causal";
  return [mixer, ctx](const Tensor& x) { return mixer->forward(x, ctx); };
}

double median_ms(const std::function<Tensor(const Tensor&)>& layer, int64_t length, int repeats, bool kernels) {
  Tensor x = normal({kBatch, length, kDim}, 0, 1, DType::Float32);
  set_requires_grad(x);
  const Tensor grad_y = normal({kBatch, length, kDim}, 0, 1, DType::Float32);
  auto step = [&] {
    backward(layer(x), grad_y);
    zero_grad(x);
  };
  step();  // warm-up: allocator caches, first-touch pages
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    step();
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  if (kernels) bench::print_kernel_times(step);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  attn::app::prepare_runtime_environment(argv);  // the OpenBLAS kernels and OpenMP waits attnlab itself runs with
  try {
    const Options o = parse(argc, argv);
    set_num_threads(o.threads);
    fmt::print("{:<12} {:>6} {:>10}   (B {}, d {}, {} threads, forward + backward, median of {})\n", "layer", "T",
               "ms", kBatch, kDim, o.threads, o.repeats);
    for (const std::string& name : o.layers)
      for (int64_t length : o.lengths) {
        manual_seed(0);
        const double ms = median_ms(make_layer(name, length), length, o.repeats, o.kernels);
        fmt::print("{:<12} {:>6} {:>10.1f}\n", name, length, ms);
        fmt::print(stderr, "{{\"layer\": \"{}\", \"T\": {}, \"threads\": {}, \"ms\": {:.2f}}}\n", name, length,
                   o.threads, ms);
      }
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_layers: {}\n", e.what());
    return 1;
  }
}
