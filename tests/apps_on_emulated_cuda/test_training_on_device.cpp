// Training and decoding with `--device cuda` end to end, on the emulated CUDA runtime
// (cuda/emulator/runtime/: the real backend's sources, kernels run on CPU threads), so the
// device path of the commands is checked on every machine:
// * Module::to moves a model to the device and back bit for bit, tied weights stay tied, and
//   handles taken before the move (an optimizer's) see the moved storage;
// * a Transformer's forward pass on the device (padded batches included) reads nothing back
//   to the host, and its decoding does only what the search needs;
// * the trainer on "cuda" follows the same trajectory as on the CPU (same Philox dropout,
//   same batches) to float tolerance, writes checkpoints that load on the CPU, and resumes;
// * a checkpoint trained on the CPU translates the same on the device.
#include <catch.hpp>

#include <cmath>

#include "../apps/synthetic_corpus.hpp"
#include "apps/generation/translator.hpp"
#include "cuda/emulator/runtime/host_reads.hpp"
#include "emulated_device.hpp"
#include "nn/adam.hpp"

using namespace attn;
using namespace attn::app;

namespace {

using testing::kCuda;
using testing::switch_on_emulated_cuda;

double max_abs_difference(const nn::NamedTensors& a, const nn::NamedTensors& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::vector<double> x = a[i].second.to_vector(), y = b[i].second.to_vector();
    REQUIRE(x.size() == y.size());
    for (size_t k = 0; k < x.size(); ++k) worst = std::max(worst, std::abs(x[k] - y[k]));
  }
  return worst;
}

nn::TransformerConfig tiny_config(const std::vector<std::string>& extra = {}) {
  return testing::test_size_config("transformer_tiny", extra);
}

}  // namespace

TEST_CASE("Module::to moves every parameter in place and back unchanged", "[device]") {
  switch_on_emulated_cuda();
  manual_seed(3);
  nn::EncoderDecoderModel model(tiny_config());
  const nn::NamedTensors before = model.state_dict();
  std::vector<std::vector<double>> values;
  for (const auto& [name, t] : before) values.push_back(t.to_vector());
  nn::Adam adam(model.named_parameters(), {});  // handles taken before the move

  model.to(kCuda);
  CHECK(model.device() == kCuda);
  for (const auto& [name, t] : model.state_dict()) CHECK(t.device() == kCuda);
  for (const auto& [name, t] : before) CHECK(t.device() == kCuda);  // old handles followed
  std::map<std::string, Tensor> moved;
  for (const auto& [name, t] : model.state_dict()) moved[name] = t;
  CHECK(moved.at("encoder.embed_tokens.weight").shares_storage(moved.at("decoder.embed_tokens.weight")));
  model.to(Device::cpu());
  const nn::NamedTensors after = model.state_dict();
  for (size_t i = 0; i < after.size(); ++i) {
    INFO(after[i].first);
    CHECK(after[i].second.device() == Device::cpu());
    CHECK(after[i].second.to_vector() == values[i]);
  }
}

TEST_CASE("a forward pass on the device never waits for it", "[device]") {
  switch_on_emulated_cuda();
  manual_seed(4);
  // Softmax attention, and a causal Performer (its running maximum) with a gated rule.
  const auto extra = GENERATE(std::vector<std::string>{}, std::vector<std::string>{
                                                             "decoder_self_mixer=kernel:performer+gated",
                                                             "causal_proj_dim=4"});
  INFO("overrides: " << extra.size());
  nn::EncoderDecoderModel model(tiny_config(extra));
  model.to(kCuda);
  model.train();
  // Sources left-padded and targets right-padded (pad = 1), as batches are.
  const Tensor src = from_vector<int64_t>({1, 1, 5, 6, 2, 7, 8, 9, 10, 2}, {2, 5}, kCuda);
  const Tensor prev = from_vector<int64_t>({2, 11, 12, 1, 2, 13, 14, 15}, {2, 4}, kCuda);
  const uint64_t reads_before = cuda_emulator::device_to_host_copies();
  const Tensor logits = model.forward(src, prev);
  CHECK(cuda_emulator::device_to_host_copies() == reads_before);
  CHECK(logits.device() == kCuda);

  // The same numbers as the CPU's.
  nn::EncoderDecoderModel reference(tiny_config(extra));
  reference.load_state_dict([&] {
    std::map<std::string, Tensor> state;
    for (const auto& [name, t] : model.state_dict()) state[name] = t.to(Device::cpu());
    return state;
  }());
  model.eval();
  reference.eval();
  const std::vector<double> on_device = model.forward(src, prev).to_vector();
  const std::vector<double> on_cpu = reference.forward(src.to(Device::cpu()), prev.to(Device::cpu())).to_vector();
  REQUIRE(on_device.size() == on_cpu.size());
  for (size_t i = 0; i < on_cpu.size(); ++i) CHECK(on_device[i] == Approx(on_cpu[i]).margin(1e-4));
}

TEST_CASE("training on cuda follows the CPU run, and its checkpoints load and resume", "[device][trainer]") {
  switch_on_emulated_cuda();
  const std::string root = testing::fresh_temp_dir("train_on_emulated_cuda");
  testing::write_reversal_corpus(root);
  TrainerOptions on_cpu = testing::tiny_trainer_options(root, root + "/cpu");
  // NAG, whose step is linear in the gradient: the backends' different summation orders stay
  // at float rounding (Adam's first steps are ±lr for any gradient, however small, so a
  // rounding-level difference of a near-zero gradient would move a weight by 2·lr).
  on_cpu.optimizer = "nag";
  on_cpu.lr = {0.1};
  on_cpu.max_update = 6;
  on_cpu.compute.threads = 1;
  TrainerOptions on_gpu = on_cpu;
  on_gpu.save_dir = root + "/cuda";
  on_gpu.compute.device = "cuda";

  {
    Trainer cpu_run(on_cpu);
    cpu_run.train();
    Trainer gpu_run(on_gpu);
    const TrainingSummary summary = gpu_run.train();
    CHECK(summary.num_updates == 6);
    CHECK(gpu_run.model().device() == kCuda);
    CHECK(max_abs_difference(gpu_run.model().state_dict(), cpu_run.model().state_dict()) < 1e-5);
  }  // the runs end: their save dirs are free again

  // Its checkpoint holds host tensors like any other: it loads on the CPU and on the device,
  // and both translate alike.
  TrainedModel host = load_trained_model(on_gpu.save_dir + "/checkpoint_last", Device::cpu());
  TrainedModel device = load_trained_model(on_gpu.save_dir + "/checkpoint_last", kCuda);
  CHECK(device.model->device() == kCuda);
  DecodingOptions decoding;
  decoding.search.beam = 2;
  const std::vector<std::vector<int64_t>> sources = {{5, 6, 7, 2}, {8, 9, 2}};
  const auto host_out = translate_sentences(*host.model, sources, decoding);
  const auto device_out = translate_sentences(*device.model, sources, decoding);
  for (size_t i = 0; i < sources.size(); ++i) {
    CHECK(device_out[i].front().tokens == host_out[i].front().tokens);
    CHECK(device_out[i].front().score == Approx(host_out[i].front().score).margin(1e-4));
  }

  // Resuming on the device continues the run: 2 more updates.
  on_gpu.max_update = 8;
  Trainer resumed(on_gpu);
  CHECK(resumed.train().num_updates == 8);
}
