// Deterministic mutation tests of every file parser (issue 14, "fuzzing"): a few hundred
// mutants (fixed seeds) each of a safetensors file, a checkpoint's JSON, a binarized corpus,
// fairseq's index of one (both formats), a dictionary, BPE codes, fairseq checkpoints as
// torch.save writes them (its zip and legacy layouts; a trainer's with its optimizer state) and
// a word alignment file. Each mutant must give a valid result or an exception whose
// message names the file; a crash or an abort fails the whole program. Inputs kept under
// tests/vectors/fuzz/<parser>/ (from the libFuzzer targets of fuzz/, or found by hand) are
// checked the same way.
#include <catch.hpp>

#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "apps/interop/fairseq_checkpoint.hpp"
#include "apps/interop/fairseq_export.hpp"
#include "apps/interop/fairseq_optimizer_state.hpp"
#include "apps/interop/torch_file.hpp"
#include "apps/training/checkpoint.hpp"
#include "core/safetensors.hpp"
#include "data/alignment_dictionary.hpp"
#include "data/binarized_corpus.hpp"
#include "data/bpe_apply.hpp"
#include "data/dictionary.hpp"
#include "data/text_io.hpp"
#include "nn/transformer/encoder_decoder_model.hpp"
#include "test_support.hpp"

using namespace attn;
using attn::test::read_file;
using attn::test::TempDir;
using attn::test::vector_path;
using attn::test::write_file;
namespace fs = std::filesystem;

namespace {

constexpr int kMutantsPerFormat = 300;

// One random edit of `bytes`: a flipped bit, a byte set to a random or a boundary value, a
// deleted, duplicated or inserted range, or a truncation.
std::string mutated(std::string bytes, std::mt19937_64& random) {
  auto below = [&](size_t n) { return n == 0 ? size_t{0} : size_t(random() % n); };
  const size_t at = below(bytes.size());
  switch (random() % 6) {
    case 0:
      if (!bytes.empty()) bytes[at] = char(bytes[at] ^ (1 << below(8)));
      break;
    case 1: {
      static const char kBoundaries[] = {'\0', '\x7f', '\x80', '\xff', '"', '{', '}', '-', '9', ' ', '\n'};
      if (!bytes.empty()) bytes[at] = random() % 2 ? char(random()) : kBoundaries[below(sizeof kBoundaries)];
      break;
    }
    case 2: bytes.erase(at, 1 + below(16)); break;
    case 3: bytes.insert(at, bytes.substr(at, 1 + below(32))); break;
    case 4: {
      std::string noise(1 + below(8), '\0');
      for (char& c : noise) c = char(random());
      bytes.insert(at, noise);
      break;
    }
    default: bytes.resize(at); break;
  }
  return bytes;
}

// Runs `parse` on the file `path` holding `content`: it must return, or throw an exception
// naming the file.
void check_parses_or_names(const std::string& path, const std::string& content,
                           const std::function<void(const std::string&)>& parse) {
  write_file(path, content);
  try {
    parse(path);
  } catch (const std::exception& e) {
    INFO("mutant of " << content.size() << " bytes: " << e.what());
    CHECK(std::string(e.what()).find(path) != std::string::npos);
  }
}

// `kMutantsPerFormat` mutants of `original` (each from one to three edits), then the kept
// regression inputs of tests/vectors/fuzz/<format>/.
void check_mutants(const std::string& format, const std::string& path, const std::string& original,
                   const std::function<void(const std::string&)>& parse, uint64_t seed) {
  REQUIRE_NOTHROW(check_parses_or_names(path, original, parse));
  std::mt19937_64 random(seed);
  for (int i = 0; i < kMutantsPerFormat; ++i) {
    std::string mutant = original;
    for (int edits = 1 + int(random() % 3); edits > 0; --edits) mutant = mutated(std::move(mutant), random);
    check_parses_or_names(path, mutant, parse);
  }
  const fs::path kept = vector_path("fuzz/" + format);
  if (!fs::exists(kept)) return;
  for (const auto& entry : fs::directory_iterator(kept)) {
    INFO("kept input " << entry.path());
    check_parses_or_names(path, read_file(entry.path().string()), parse);
  }
}

}  // namespace

TEST_CASE("mutated safetensors files load or fail naming the file") {
  TempDir dir;
  const std::string original = dir.file("original.safetensors");
  save_safetensors(original,
                   {{"encoder.weight", from_vector<float>({1.5f, -2.0f, 0.25f, 4.0f}, {2, 2})},
                    {"steps", from_vector<int64_t>({7}, {1})},
                    {"lengths", from_vector<int32_t>({3, 0, 1}, {3})}},
                   {{"format", "pt"}});
  check_mutants("safetensors", dir.file("mutant.safetensors"), read_file(original),
                [](const std::string& path) { load_safetensors(path); }, 1);
}

TEST_CASE("mutated checkpoint JSON loads or fails naming the file") {
  TempDir dir;
  const std::string base = dir.file("checkpoint1");
  app::CheckpointContent content;
  content.model = {{"decoder.embed_tokens.weight", from_vector<float>({0.5f, 1.0f, -1.0f, 2.0f}, {2, 2})}};
  content.metadata = {{"epoch", 1}, {"num_updates", 12}, {"best_loss", 3.25}, {"args", {{"arch", "transformer_tiny"}}}};
  app::save_checkpoint(base, content);
  const std::string json = read_file(app::metadata_path(base));
  check_mutants("checkpoint_json", app::metadata_path(base), json,
                [&](const std::string&) { app::load_checkpoint(base, false); }, 2);
}

TEST_CASE("mutated binarized corpora open or fail naming the file") {
  TempDir dir;
  const std::string original = dir.file("original.bin");
  data::Dictionary twelve_symbols;
  twelve_symbols.pad_to_multiple(12);
  data::write_binarized_corpus(original, {{5, 6, 2}, {2}, {9, 4, 7, 8, 2}, {3, 3, 2}}, twelve_symbols);
  check_mutants("binarized", dir.file("mutant.bin"), read_file(original),
                [](const std::string& path) {
                  const data::BinarizedCorpus corpus = data::BinarizedCorpus::open(path);
                  for (size_t i = 0; i < corpus.size(); ++i) corpus.sentence(i);
                },
                3);
}

TEST_CASE("mutated dictionaries load or fail naming the file") {
  TempDir dir;
  check_mutants("dictionary", dir.file("dict.en.txt"), "the 120\n, 80\nHaus 12\nü 3\nword 1 #fairseq:overwrite\n",
                [](const std::string& path) { data::Dictionary::load(path).encode_line("the Haus ü , x"); }, 4);
}

TEST_CASE("mutated BPE codes load or fail naming the file") {
  TempDir dir;
  const std::string codes = read_file(vector_path("own/bpe/codes.200"));
  check_mutants("bpe_codes", dir.file("codes"), codes.substr(0, codes.find('\n', 600) + 1),
                [](const std::string& path) {
                  data::BpeEncoder(data::BpeCodes::read(path), {}).process_line("the quick brown fox jumps\n");
                },
                5);
}

TEST_CASE("mutated fairseq indexes (mmap, lazy/cached) open or fail naming the index") {
  for (const auto& [data_bin, seed] :
       {std::pair<std::string, uint64_t>{"own/fairseq/data-bin/", 6}, {"own/fairseq/data-bin-lazy/", 10}}) {
    TempDir dir;
    const std::string bin = dir.file("valid.en-de.en.bin");
    fs::copy_file(vector_path(data_bin + "valid.en-de.en.bin"), bin);
    check_mutants(
        "fairseq_index", dir.file("valid.en-de.en.idx"), read_file(vector_path(data_bin + "valid.en-de.en.idx")),
        [&](const std::string&) {
          const data::BinarizedCorpus corpus = data::BinarizedCorpus::open(bin);
          for (size_t i = 0; i < corpus.size(); ++i) corpus.sentence(i);
        },
        seed);
  }
}

TEST_CASE("mutated fairseq checkpoints (torch.save's zip and legacy files) read or fail naming the file") {
  TempDir dir;
  uint64_t seed = 7;
  for (const char* layout : {"zip_args.pt", "legacy.pt"})
    check_mutants("torch_file", dir.file("model.pt"), read_file(vector_path(std::string("own/fairseq/pt/") + layout)),
                  [](const std::string& path) { app::read_fairseq_checkpoint(path); }, seed++);
}

TEST_CASE("mutated fairseq trainer checkpoints give their optimizer state or fail naming the file") {
  TempDir dir;
  uint64_t seed = 11;
  for (const char* layout : {"trainer_adam.pt", "trainer_adam_legacy.pt"})
    check_mutants(
        "trainer_checkpoint", dir.file("model.pt"), read_file(vector_path(std::string("own/fairseq/pt/") + layout)),
        [](const std::string& path) {
          const app::TorchFile file = app::TorchFile::read(path);
          const app::FairseqModel imported = app::read_fairseq_checkpoint(file, path);
          nn::EncoderDecoderModel model(imported.config);
          try {
            model.load_state_dict(imported.weights);
          } catch (const Error& e) {  // as import-fairseq names it
            throw Error(fmt::format("{}: {}", path, e.what()));
          }
          app::imported_optimizer_state(
              file, path, app::fairseq_parameters(app::fairseq_tensors(model.config(), model.state_dict())),
              model.named_parameters());
        },
        seed++);
}

TEST_CASE("mutated alignment files give an alignment dictionary or fail naming the file") {
  TempDir dir;
  const std::string text = vector_path("own/fairseq/data-bin-text/train.");
  const std::vector<std::string> source = data::read_lines(text + "en"), target = data::read_lines(text + "de");
  const data::Dictionary source_dict = data::Dictionary::load(vector_path("own/fairseq/data-bin/dict.en.txt"));
  const data::Dictionary target_dict = data::Dictionary::load(vector_path("own/fairseq/data-bin/dict.de.txt"));
  check_mutants(
      "alignment", dir.file("train.align"), read_file(vector_path("own/fairseq/alignment/train.align")),
      [&](const std::string& path) {
        data::alignment_dictionary_text(path, source, text + "en", target, text + "de", source_dict, target_dict);
      },
      13);
}
