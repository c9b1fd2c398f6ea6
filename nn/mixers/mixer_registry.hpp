// Creating token mixers by name (DESIGN.md §4): the model config names the mixer of each
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

}  // namespace attn::nn
