// What sacreBLEU's scores print through: Python's fixed-point format and its JSON of a score
// (docs/mt-tools.md §3.1, §3.9). Shared by BLEU (data/bleu.hpp) and chrF (data/chrf.hpp).
#pragma once
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace attn::data {

// f"{value:.{decimals}f}": printf's "%.*f" rounds the exact binary value as Python does.
std::string fixed_decimals(double value, int decimals);
// float(f"{value:.{decimals}f}"): the value as printed, read back (sacreBLEU's JSON scores).
double printed_value(double value, int decimals);
// sacreBLEU's JSON of one score: `fields` (name, score, signature, ...) followed by each
// `key:value` of the signature, indented by one space as json.dumps(indent=1) writes it.
std::string sacrebleu_score_json(nlohmann::ordered_json fields, std::string_view signature);

}  // namespace attn::data
