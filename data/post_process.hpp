// fairseq's post-processing of decoded text (its data_utils.post_process, the --post-process /
// --remove-bpe and --eval-bleu-remove-bpe flags; docs/mt-tools.md §1.3): how the symbols of a
// hypothesis, joined by spaces, become text again under the scheme their subword units were
// made with. s.strip() and s.rstrip() are Python's (Unicode whitespace).
//   subword_nmt, "@@ ", "@@"  (s + " ").replace(marker, "").rstrip(), subword_nmt's marker "@@ "
//   sentencepiece             spaces removed, "▁" (U+2581) → space, strip()
//   wordpiece, letter, _EOW   spaces removed, "_" / "|" / "_EOW" → space, strip()
//   silence                   "<SIL>" removed, runs of spaces → one, strip()
//   none, or ""               unchanged
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace attn::data {

// The schemes, the one a bare flag means first (subword_nmt).
const std::vector<std::string>& post_process_schemes();

// `sentence` post-processed by `scheme`; throws attn::Error on a scheme not listed above.
std::string post_process(std::string_view sentence, std::string_view scheme);

}  // namespace attn::data
