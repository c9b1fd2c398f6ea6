// --eval-bleu (fairseq's translation task): each validation also translates the validation
// split with beam search and scores it with sacreBLEU, so that training can keep the
// checkpoint that translates best (--best-checkpoint-metric bleu) or stop when BLEU stalls
// (--patience). As fairseq: the references are the split's binarized targets turned back
// into text the same way as the hypotheses (--eval-bleu-remove-bpe, --eval-bleu-detok), an
// unknown word never matches (<unk> is written UNKNOWNTOKENINHYP in hypotheses and
// UNKNOWNTOKENINREF in references), and the score is sacreBLEU's 13a (or, with
// --eval-tokenized-bleu, its "none" tokenizer on the text as it is). With several ranks each
// translates the sentences i with i mod size = rank and the n-gram statistics are summed, so
// every rank gets the score of the whole split.
#pragma once
#include <cstdint>
#include <string>

#include "apps/task/translation_task.hpp"
#include "data/bleu.hpp"
#include "dist/communicator.hpp"
#include "nn/search/hypothesis.hpp"
#include "nn/transformer/encoder_decoder_model.hpp"

namespace attn::app {

struct BleuValidationOptions {
  bool enabled = false;          // --eval-bleu
  nn::SearchOptions search;      // --eval-bleu-args
  std::string detok = "space";   // --eval-bleu-detok: space (text as it is) | moses
  std::string detok_language;    // --eval-bleu-detok-args' target_lang; empty: the task's target language
  std::string remove_bpe;        // --eval-bleu-remove-bpe: a scheme of data/post_process.hpp, empty: kept
  bool tokenized_bleu = false;   // --eval-tokenized-bleu
  bool print_samples = false;    // --eval-bleu-print-samples
};

// --eval-bleu-args: a JSON object of generation options, fairseq's keys — beam, lenpen,
// max_len_a, max_len_b, min_len, no_repeat_ngram_size, unkpen — over the defaults in `search`.
// Another key, a wrong type or a value out of range (for lenpen, max_len_a and unkpen: the
// ranges of nn/search/hypothesis.hpp) is an error naming it.
nn::SearchOptions parse_eval_bleu_args(const std::string& json, nn::SearchOptions search = {});

// --eval-bleu-detok-args: fairseq's Moses tokenizer settings as JSON, of which detokenization
// reads target_lang (returned; empty when not given); source_lang, moses_no_dash_splits and
// moses_no_escape, which only tokenizing reads, are accepted. Another key or a wrong type is an
// error naming it. fairseq's own default target_lang is "en" whatever the task's; attnlab's is
// the task's target language.
std::string parse_eval_bleu_detok_args(const std::string& json);

struct BleuValidation {
  data::BleuScore score;
  std::string signature;                     // sacreBLEU's
  std::string sample_hypothesis, sample_reference;  // of the split's first sentence (rank 0)
};

// Translates `corpora` (a split of the task) with `model` in eval mode, batched by
// max_tokens / max_sentences as generation batches, and scores it; `target_lang` picks the
// Moses detokenizer's rules. `world`: see the header comment (null: one process).
BleuValidation evaluate_bleu(nn::EncoderDecoderModel& model, const SplitCorpora& corpora,
                             const data::Dictionary& target_dict, const BleuValidationOptions& options,
                             const std::string& target_lang, int64_t max_tokens, int64_t max_sentences,
                             dist::Communicator* world = nullptr);

}  // namespace attn::app
