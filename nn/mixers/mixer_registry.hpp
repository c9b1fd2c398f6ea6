// Creating token mixers by name (docs/design.md §4): the model config names the mixer of each
// place ("softmax", and later "linformer", "lightconv", "kernel:elu+additive", ...), and the
// layers ask this registry for it, so a new variant plugs in by registering a factory —
// the model code never changes.
//
// A kind string is `family` or `family:variant`; the family selects the factory, which
// receives the whole kind (and parses its variant). The built-in families are registered
// in mixer_registry.cpp (listed there explicitly: a static library would drop a variant's
// self-registration object file that nothing else references).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nn/mixers/mixer_options.hpp"
#include "nn/mixers/token_mixer.hpp"

namespace attn::nn {

using MixerFactory = std::function<std::shared_ptr<TokenMixer>(const MixerOptions&)>;

// Adds (or replaces) the factory of a family; the family must not contain ':'.
void register_mixer(const std::string& family, MixerFactory factory);
// Builds the mixer options.kind names; throws attn::Error listing the known families.
std::shared_ptr<TokenMixer> create_mixer(const MixerOptions& options);
std::vector<std::string> registered_mixer_families();

// A module shared by a family's mixers in every layer of one stack (Linformer's layerwise E):
// the stack builds it once, from the first layer whose mixer is of that family, registers it
// under `name` (saved once) and hands it to every layer through MixerOptions::shared.
// `create` returns null when the options ask for no sharing.
struct StackSharedFactory {
  std::string name;
  std::function<std::shared_ptr<Module>(const MixerOptions&)> create;
};
void register_stack_shared(const std::string& family, StackSharedFactory factory);

struct StackShared {
  std::string name;
  std::shared_ptr<Module> module;  // null: the family shares nothing across layers
};
StackShared create_stack_shared(const MixerOptions& options);

}  // namespace attn::nn
