// A sentence's attention as files: one heat map per place, layer and head (PNG, tokens on the
// axes, the mixer's kind in the title), and all the numbers in one JSON file.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "apps/inspection/attention_capture.hpp"
#include "nn/transformer/transformer_config.hpp"

namespace attn::app {

struct MapFigure {
  int place = 0;
  int64_t layer = 0, head = 0;  // from 0
  std::string file_name;        // "cross-layer2-head1.png" (1-based in names)
  std::string png;              // the image's bytes
};

// Every head's heat map (places in kPlaceNames order, then layers, then heads). `places`
// selects places by index (empty: all).
std::vector<MapFigure> sentence_figures(const SentenceAttention& s, const nn::TransformerConfig& config,
                                        const std::vector<int>& places = {});

// {"source", "decoder_input", "decoder_output", "places": {name: {"kinds": [per layer], "maps":
// [layer][head][query][key]}}}
nlohmann::json sentence_json(const SentenceAttention& s, const nn::TransformerConfig& config);

// A file of an output folder: its name there and its bytes.
struct NamedFile {
  std::string name, content;
};

// The files of a sentence's attention: every figure, then attention.json. The caller writes
// them (`inspect` together with its other outputs, all or none).
std::vector<NamedFile> sentence_attention_files(const SentenceAttention& s, const nn::TransformerConfig& config);
// Whether a file name is one of sentence_attention_files: a figure's ("cross-layer2-head1.png")
// or attention.json.
bool is_sentence_attention_file(const std::string& file_name);

}  // namespace attn::app
