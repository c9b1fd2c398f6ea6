#include "nn/mixers/mixer_registry.hpp"

#include <fmt/ranges.h>

#include "nn/mixers/conv_block.hpp"
#include "nn/mixers/kernel_attention.hpp"
#include "nn/mixers/linformer_attention.hpp"
#include "nn/mixers/softmax_attention.hpp"

namespace attn::nn {
namespace {

std::map<std::string, MixerFactory> builtin_families() {
  return {
      {"softmax", [](const MixerOptions& o) { return std::make_shared<SoftmaxAttention>(o); }},
      {"lightconv", [](const MixerOptions& o) { return std::make_shared<ConvBlock>(o); }},
      {"dynamicconv", [](const MixerOptions& o) { return std::make_shared<ConvBlock>(o); }},
      {"linformer", [](const MixerOptions& o) { return std::make_shared<LinformerAttention>(o); }},
      {"kernel", [](const MixerOptions& o) { return std::make_shared<KernelAttention>(o); }},
  };
}

std::map<std::string, StackSharedFactory> builtin_stack_shared() {
  return {{"linformer", {"compress_layer", make_linformer_layer_compression}}};
}

std::map<std::string, MixerFactory>& registry() {
  static std::map<std::string, MixerFactory> families = builtin_families();
  return families;
}

std::map<std::string, StackSharedFactory>& stack_shared_registry() {
  static std::map<std::string, StackSharedFactory> factories = builtin_stack_shared();
  return factories;
}

std::string family_of(const std::string& kind) { return kind.substr(0, kind.find(':')); }

}  // namespace

void register_mixer(const std::string& family, MixerFactory factory) {
  ATTN_CHECK(!family.empty() && family.find(':') == std::string::npos,
             "register_mixer: family '{}' must be non-empty and contain no ':'", family);
  registry()[family] = std::move(factory);
}

std::shared_ptr<TokenMixer> create_mixer(const MixerOptions& options) {
  auto it = registry().find(family_of(options.kind));
  ATTN_CHECK(it != registry().end(), "unknown token mixer '{}' (known: {})", options.kind,
             fmt::join(registered_mixer_families(), ", "));
  return it->second(options);
}

std::vector<std::string> registered_mixer_families() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : registry()) names.push_back(name);
  return names;
}

void register_stack_shared(const std::string& family, StackSharedFactory factory) {
  stack_shared_registry()[family] = std::move(factory);
}

StackShared create_stack_shared(const MixerOptions& options) {
  auto it = stack_shared_registry().find(family_of(options.kind));
  if (it == stack_shared_registry().end()) return {};
  return {it->second.name, it->second.create(options)};
}

}  // namespace attn::nn
