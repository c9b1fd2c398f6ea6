// The sequential colour scale of the heat maps: the viridis scale (van der Walt & Smith,
// matplotlib's default since 2.0), perceptually uniform and readable in grey and by
// colour-blind readers, from dark blue-violet (low) to yellow (high); linear in between
// nine anchors of the published scale.
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

}  // namespace attn::plot
