#include "data/sacrebleu_output.hpp"

#include <cstdio>
#include <cstdlib>

namespace attn::data {

std::string fixed_decimals(double value, int decimals) {
  char buffer[400];  // a double's integer part has at most 309 digits
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

double printed_value(double value, int decimals) { return std::strtod(fixed_decimals(value, decimals).c_str(), nullptr); }

std::string sacrebleu_score_json(nlohmann::ordered_json fields, std::string_view signature) {
  for (size_t start = 0; start < signature.size();) {
    const size_t end = std::min(signature.find('|', start), signature.size());
    const std::string_view field = signature.substr(start, end - start);
    const size_t colon = field.find(':');
    fields[std::string(field.substr(0, colon))] = field.substr(colon + 1);
    start = end + 1;
  }
  return fields.dump(1);
}

}  // namespace attn::data
