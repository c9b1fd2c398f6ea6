// The colour scales of the heat maps. Sequential (maps of weights ≥ 0): viridis (van der
// Walt & Smith, matplotlib's default since 2.0), perceptually uniform and readable in grey
// and by colour-blind readers, from dark blue-violet (low) to yellow (high), linear between
// nine anchors of the published scale. Diverging (maps with negative weights): blue for
// negative, white at zero, red for positive (the end colours of Moreland's cool-warm scale).
#pragma once
#include <algorithm>
#include <array>
#include <cmath>

#include "apps/plotting/canvas.hpp"

namespace attn::plot {

// The colour of t ∈ [0, 1] (clamped; NaN is grey).
inline Colour viridis(double t) {
  static constexpr std::array<Colour, 9> anchors = {{{0.267, 0.005, 0.329},
                                                     {0.283, 0.141, 0.458},
                                                     {0.254, 0.265, 0.530},
                                                     {0.207, 0.372, 0.553},
                                                     {0.164, 0.471, 0.558},
                                                     {0.128, 0.567, 0.551},
                                                     {0.135, 0.659, 0.518},
                                                     {0.369, 0.789, 0.383},
                                                     {0.993, 0.906, 0.144}}};
  if (std::isnan(t)) return kGrey;
  const double at = std::clamp(t, 0.0, 1.0) * double(anchors.size() - 1);
  const size_t i = std::min(size_t(at), anchors.size() - 2);
  const double f = at - double(i);
  const Colour& a = anchors[i];
  const Colour& b = anchors[i + 1];
  return {a.r + f * (b.r - a.r), a.g + f * (b.g - a.g), a.b + f * (b.b - a.b)};
}

// The colour of t ∈ [−1, 1] (clamped; NaN is grey): blue, white at 0, red.
inline Colour cool_warm(double t) {
  static constexpr Colour cool{0.230, 0.299, 0.754}, middle{0.970, 0.970, 0.970}, warm{0.706, 0.016, 0.150};
  if (std::isnan(t)) return kGrey;
  const double f = std::min(std::abs(t), 1.0);
  const Colour& end = t < 0 ? cool : warm;
  return {middle.r + f * (end.r - middle.r), middle.g + f * (end.g - middle.g), middle.b + f * (end.b - middle.b)};
}

}  // namespace attn::plot
