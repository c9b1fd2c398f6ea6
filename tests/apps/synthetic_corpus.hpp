// Test fixture for apps/ tests: a tiny synthetic translation task (target = reversed
// source over the words w0..w{V-1}) binarized in a fresh temp dir in fairseq's layout
// (dict.src.txt, dict.tgt.txt, {train,valid,test}.src-tgt.{src,tgt}.bin), trainer options
// for a very small Transformer on it, and a bit-for-bit comparison of two models.
#pragma once
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "apps/training/trainer.hpp"
#include "data/binarized_corpus.hpp"
#include "data/dictionary.hpp"

namespace attn::app::testing {

// The folders fresh_temp_dir made, removed with their contents when the test program exits.
struct TempDirsRemovedAtExit {
  std::vector<std::filesystem::path> dirs;
  ~TempDirsRemovedAtExit() {
    std::error_code ignored;
    for (const auto& dir : dirs) std::filesystem::remove_all(dir, ignored);
  }
};

// An empty folder named after the test and the process, kept until the test program exits
// (tests look into it after the code under test is done with it).
inline std::string fresh_temp_dir(const std::string& name) {
  static TempDirsRemovedAtExit made;
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("attnlab_{}_{}", name, ::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  made.dirs.push_back(dir);
  return dir.string();
}

// Writes the corpus into `dir`; sentences have 2..7 words. Returns the dictionary.
inline data::Dictionary write_reversal_corpus(const std::string& dir, int vocabulary = 16, int train_pairs = 48) {
  data::Dictionary dict;
  for (int w = 0; w < vocabulary; ++w) dict.add_symbol(fmt::format("w{}", w), vocabulary - w);
  dict.save(dir + "/dict.src.txt");
  dict.save(dir + "/dict.tgt.txt");
  std::mt19937 rng(7);
  for (const auto& [split, pairs] : {std::pair{"train", train_pairs}, {"valid", 8}, {"test", 8}}) {
    std::vector<std::vector<int32_t>> sources, targets;
    for (int i = 0; i < pairs; ++i) {
      std::vector<int32_t> s(2 + rng() % 6);
      for (int32_t& id : s) id = data::Dictionary::kNumSpecial + int32_t(rng() % uint32_t(vocabulary));
      std::vector<int32_t> t(s.rbegin(), s.rend());
      s.push_back(data::Dictionary::kEos);
      t.push_back(data::Dictionary::kEos);
      sources.push_back(s);
      targets.push_back(t);
    }
    data::write_binarized_corpus(data::binarized_path(dir, split, "src", "tgt", "src"), sources, dict);
    data::write_binarized_corpus(data::binarized_path(dir, split, "src", "tgt", "tgt"), targets, dict);
  }
  return dict;
}

// A one-layer D=32 Transformer with Adam and inverse-sqrt warmup; ~90-token batches.
inline TrainerOptions tiny_trainer_options(const std::string& data_dir, const std::string& save_dir) {
  TrainerOptions o;
  o.data_dir = data_dir;
  o.save_dir = save_dir;
  o.arch = "transformer_tiny";
  o.model_overrides = {"encoder_layers=1",        "decoder_layers=1",        "encoder_embed_dim=32",
                       "decoder_embed_dim=32",    "encoder_ffn_embed_dim=64", "decoder_ffn_embed_dim=64",
                       "encoder_attention_heads=2", "decoder_attention_heads=2", "dropout=0.1"};
  o.label_smoothing = 0.1;
  o.optimizer = "adam";
  o.adam_beta2 = 0.98;
  o.lr_scheduler = "inverse_sqrt";
  o.lr = {3e-3};
  o.warmup_updates = 4;
  o.max_tokens = 96;
  o.log_interval = 0;
  o.progress = ProgressMode::kQuiet;
  return o;
}

// `BINARY train` with the options of tiny_trainer_options on one thread (exact resume), to
// which a test appends its stopping and saving flags.
inline std::vector<std::string> tiny_training_command(const std::string& binary, const std::string& data_dir,
                                                      const std::string& save_dir) {
  return {binary, "train", data_dir, "--save-dir", save_dir, "--arch", "transformer_tiny",
          "--encoder-layers", "1", "--decoder-layers", "1", "--encoder-embed-dim", "32", "--decoder-embed-dim", "32",
          "--encoder-ffn-embed-dim", "64", "--decoder-ffn-embed-dim", "64", "--encoder-attention-heads", "2",
          "--decoder-attention-heads", "2", "--dropout", "0.1", "--label-smoothing", "0.1", "--optimizer", "adam",
          "--adam-betas", "(0.9, 0.98)", "--lr-scheduler", "inverse_sqrt", "--lr", "0.003", "--warmup-updates", "4",
          "--max-tokens", "96", "--threads", "1", "--progress", "lines", "--log-interval", "0"};
}

// Whether two models' state dicts are equal bit for bit (names, shapes and bytes).
inline bool bitwise_equal(nn::EncoderDecoderModel& a, nn::EncoderDecoderModel& b) {
  const nn::NamedTensors sa = a.state_dict(), sb = b.state_dict();
  if (sa.size() != sb.size()) return false;
  for (size_t i = 0; i < sa.size(); ++i) {
    const Tensor x = sa[i].second.contiguous(), y = sb[i].second.contiguous();
    if (sa[i].first != sb[i].first || x.shape() != y.shape() || std::memcmp(x.raw_data(), y.raw_data(), x.nbytes()) != 0)
      return false;
  }
  return true;
}

}  // namespace attn::app::testing
