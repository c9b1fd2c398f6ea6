// Attention figures. See map_figures.hpp.
#include "apps/inspection/map_figures.hpp"

#include <algorithm>
#include <regex>

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "apps/plotting/heat_map.hpp"
#include "nn/transformer/layer_wiring.hpp"

namespace attn::app {
namespace {

constexpr const char* kAttentionFile = "attention.json";

// The mixer's kind as the registry names it ("lightconv", not the config's "conv").
std::string kind_of(const nn::TransformerConfig& config, int place, int64_t layer) {
  const nn::MixerPlace places[] = {nn::MixerPlace::EncoderSelf, nn::MixerPlace::DecoderSelf, nn::MixerPlace::Cross};
  return nn::mixer_options(config, places[place], layer).kind;
}

}  // namespace

std::vector<MapFigure> sentence_figures(const SentenceAttention& s, const nn::TransformerConfig& config,
                                        const std::vector<int>& places) {
  std::vector<MapFigure> figures;
  for (int place = 0; place < 3; ++place) {
    if (!places.empty() && std::find(places.begin(), places.end(), place) == places.end()) continue;
    const std::vector<Tensor>& layers = place_maps(s.maps, place);
    for (size_t l = 0; l < layers.size(); ++l) {
      const Tensor& map = layers[l];  // [1, H, Tq, Tk]
      for (int64_t h = 0; h < map.size(1); ++h) {
        plot::HeatMap heat{fmt::format("{} · layer {} · head {} ({})", kPlaceTitles[place], l + 1, h + 1,
                                       kind_of(config, place, int64_t(l))),
                           s.queries(place), s.keys(place), select(select(map, 0, 0), 0, h).to_vector()};
        figures.push_back({place, int64_t(l), h, fmt::format("{}-layer{}-head{}.png", kPlaceNames[place], l + 1, h + 1),
                           plot::draw_heat_map(heat)->png()});
      }
    }
  }
  return figures;
}

nlohmann::json sentence_json(const SentenceAttention& s, const nn::TransformerConfig& config) {
  nlohmann::json places = nlohmann::json::object();
  for (int place = 0; place < 3; ++place) {
    nlohmann::json kinds = nlohmann::json::array(), maps = nlohmann::json::array();
    const std::vector<Tensor>& layers = place_maps(s.maps, place);
    for (size_t l = 0; l < layers.size(); ++l) {
      kinds.push_back(kind_of(config, place, int64_t(l)));
      const Tensor& map = layers[l];
      const std::vector<double> values = map.to_vector();
      nlohmann::json heads = nlohmann::json::array();
      for (int64_t h = 0; h < map.size(1); ++h) {
        nlohmann::json rows = nlohmann::json::array();
        for (int64_t i = 0; i < map.size(2); ++i) {
          const auto row = values.begin() + (h * map.size(2) + i) * map.size(3);
          rows.push_back(std::vector<double>(row, row + map.size(3)));
        }
        heads.push_back(rows);
      }
      maps.push_back(heads);
    }
    places[kPlaceNames[place]] = {{"kinds", kinds}, {"maps", maps}};
  }
  return {{"source", s.source}, {"decoder_input", s.decoder_input}, {"decoder_output", s.decoder_output},
          {"places", places}};
}

std::vector<NamedFile> sentence_attention_files(const SentenceAttention& s, const nn::TransformerConfig& config) {
  std::vector<NamedFile> files;
  for (MapFigure& f : sentence_figures(s, config)) files.push_back({std::move(f.file_name), std::move(f.png)});
  files.push_back({kAttentionFile, sentence_json(s, config).dump() + "\n"});
  return files;
}

bool is_sentence_attention_file(const std::string& file_name) {
  static const std::regex figure(fmt::format("({})-layer[0-9]+-head[0-9]+\\.png", fmt::join(kPlaceNames, "|")));
  return file_name == kAttentionFile || std::regex_match(file_name, figure);
}

}  // namespace attn::app
