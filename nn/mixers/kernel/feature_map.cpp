// The feature-map factory and the denominator guards. See feature_map.hpp.
#include "nn/mixers/kernel/feature_map.hpp"

#include <functional>
#include <limits>
#include <map>

#include <fmt/ranges.h>

namespace attn::nn {
namespace {

struct MapEntry {
  std::function<std::shared_ptr<FeatureMap>(const FeatureMapOptions&)> make;
  bool normalisable;
};

const std::map<std::string, MapEntry>& factories() {
  static const std::map<std::string, MapEntry> table = {
      {"dpfp", {make_dpfp_feature_map, true}}, {"elu", {make_elu_feature_map, true}},
      {"identity", {make_identity_feature_map, false}}, {"performer", {make_performer_feature_map, true}},
      {"rfa", {make_rfa_feature_map, true}},
      {"t2r", {make_t2r_feature_map, true}},
  };
  return table;
}

const MapEntry& entry(const std::string& name) {
  auto it = factories().find(name);
  ATTN_CHECK(it != factories().end(), "unknown feature map '{}' (known: {})", name,
             fmt::join(feature_map_names(), ", "));
  return it->second;
}

}  // namespace

Tensor DenominatorGuard::apply(const Tensor& d) const {
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  switch (kind) {
    case Kind::AddEpsilon: return d + epsilon;
    case Kind::ClampBelow: return clamp(d, epsilon, kInfinity);
    case Kind::ClampAbsolute: return clamp(abs(d), epsilon, kInfinity);
  }
  return d;
}

FeatureMap::Folded FeatureMap::fold(const Tensor&, const Tensor&, bool) const { return {}; }

const std::vector<std::string>& feature_map_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& [name, factory] : factories()) out.push_back(name);
    return out;
  }();
  return names;
}

std::shared_ptr<FeatureMap> make_feature_map(const FeatureMapOptions& o) { return entry(o.name).make(o); }
bool feature_map_is_normalisable(const std::string& name) { return entry(name).normalisable; }

}  // namespace attn::nn
