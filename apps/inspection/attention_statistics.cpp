// Attention statistics. See attention_statistics.hpp.
#include "apps/inspection/attention_statistics.hpp"

#include <cmath>
#include <cstdlib>
#include <optional>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "apps/inspection/attention_capture.hpp"
#include "core/error.hpp"

namespace attn::app {
namespace {

// The real rows and keys of sentence b at a place: query positions [q0, q1), keys [k0, k1).
struct Span {
  int64_t q0, q1, k0, k1;
};

Span real_span(int place, const BatchGeometry& g, size_t b) {
  const int64_t source_start = g.source_len - g.source_lengths[b], target_end = g.target_lengths[b];
  if (place == 0) return {source_start, g.source_len, source_start, g.source_len};
  if (place == 1) return {0, target_end, 0, target_end};
  return {0, target_end, source_start, g.source_len};
}

// One head's maps of one place: row pointers into a [B, H, Tq, Tk] float copy.
struct HeadRows {
  std::vector<double> values;
  int64_t heads = 0, queries = 0, keys = 0;
  explicit HeadRows(const Tensor& map)
      : values(map.to_vector()), heads(map.size(1)), queries(map.size(2)), keys(map.size(3)) {}
  const double* row(size_t b, int64_t h, int64_t i) const {
    return values.data() + ((int64_t(b) * heads + h) * queries + i) * keys;
  }
};

void add_row(HeadStatistics& s, const double* w, const double* teacher, int64_t query, const Span& span, bool self) {
  if (teacher) {
    double tv = 0;
    for (int64_t j = span.k0; j < span.k1; ++j) tv += std::abs(w[j] - teacher[j]);
    s.teacher_sum += tv / 2;
    ++s.teacher_rows;
  }
  double mass = 0;
  for (int64_t j = span.k0; j < span.k1; ++j) mass += std::abs(w[j]);
  if (!(mass > 0)) return;
  double entropy = 0, distance = 0;
  for (int64_t j = span.k0; j < span.k1; ++j) {
    const double p = std::abs(w[j]) / mass;
    if (p > 0) entropy -= p * std::log(p);
    distance += p * double(std::abs(query - j));
  }
  s.entropy_sum += entropy;
  if (self) s.distance_sum += distance;
  ++s.rows;
}

}  // namespace

void AttentionStatistics::add(const nn::AttentionMaps& maps, const nn::AttentionMaps* teacher,
                              const BatchGeometry& g) {
  compared_ = compared_ || teacher != nullptr;
  sentences_ += int64_t(g.source_lengths.size());
  for (int place = 0; place < 3; ++place) {
    const std::vector<Tensor>& layers = place_maps(maps, place);
    if (teacher)
      ATTN_CHECK(place_maps(*teacher, place).size() == layers.size(),
                 "inspect --compare-to: {} has {} layers in the model, {} in the teacher", kPlaceNames[place],
                 layers.size(), place_maps(*teacher, place).size());
    auto& place_heads = heads_[place];
    place_heads.resize(layers.size());
    for (size_t l = 0; l < layers.size(); ++l) {
      const HeadRows rows(layers[l]);
      std::optional<HeadRows> teacher_rows;
      if (teacher) {
        teacher_rows.emplace(place_maps(*teacher, place)[l]);
        ATTN_CHECK(teacher_rows->heads == rows.heads,
                   "inspect --compare-to: {} layer {} has {} heads in the model, {} in the teacher",
                   kPlaceNames[place], l + 1, rows.heads, teacher_rows->heads);
      }
      place_heads[l].resize(size_t(rows.heads));
      for (size_t b = 0; b < g.source_lengths.size(); ++b) {
        const Span span = real_span(place, g, b);
        for (int64_t h = 0; h < rows.heads; ++h)
          for (int64_t i = span.q0; i < span.q1; ++i) {
            // Only the real keys: padding's weights are never read.
            const size_t keys = size_t(span.k1 - span.k0);
            check_weights_finite(rows.row(b, h, i) + span.k0, keys, place, l, h, "the model");
            if (teacher_rows)
              check_weights_finite(teacher_rows->row(b, h, i) + span.k0, keys, place, l, h,
                                   "the teacher (--compare-to)");
            add_row(place_heads[l][size_t(h)], rows.row(b, h, i), teacher_rows ? teacher_rows->row(b, h, i) : nullptr,
                    i, span, place != 2);
          }
      }
    }
  }
}

nlohmann::json AttentionStatistics::to_json() const {
  nlohmann::json places = nlohmann::json::object();
  for (int place = 0; place < 3; ++place) {
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& layer : heads_[place]) {
      nlohmann::json heads = nlohmann::json::array();
      for (const HeadStatistics& s : layer) {
        nlohmann::json head = {{"entropy", s.entropy()}};
        head["distance"] = place == 2 ? nlohmann::json() : nlohmann::json(s.distance());
        if (compared_) head["to_teacher"] = s.to_teacher();
        heads.push_back(head);
      }
      layers.push_back(heads);
    }
    places[kPlaceNames[place]] = layers;
  }
  return {{"sentences", sentences_}, {"places", places}};
}

std::string AttentionStatistics::table() const {
  std::string out = fmt::format("{:<13} {:>5} {:>4} {:>13} {:>13}{}\n", "place", "layer", "head", "entropy(nats)",
                                "distance", compared_ ? "    to teacher" : "");
  for (int place = 0; place < 3; ++place)
    for (size_t l = 0; l < heads_[place].size(); ++l)
      for (size_t h = 0; h < heads_[place][l].size(); ++h) {
        const HeadStatistics& s = heads_[place][l][h];
        out += fmt::format("{:<13} {:>5} {:>4} {:>13.3f} {:>13}{}\n", kPlaceNames[place], l + 1, h + 1, s.entropy(),
                           place == 2 ? "-" : fmt::format("{:.3f}", s.distance()),
                           compared_ ? fmt::format(" {:>13.4f}", s.to_teacher()) : "");
      }
  return out;
}

}  // namespace attn::app
