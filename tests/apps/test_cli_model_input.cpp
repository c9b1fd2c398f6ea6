// Bad input to the model commands that needs no trained model (tests/apps/test_cli.cpp has the
// ones that do): a model configuration too large to build, batch, search and schedule flags
// out of range, a non-integer for an integer flag, a mixer its place cannot take and an empty
// inspect --target, each refused at once naming the field or the flag — never hours of
// building layers, nor a value silently taken as another.
#include <catch.hpp>

#include "cli_runner.hpp"

using namespace attn::test;

TEST_CASE("a layer count or model size beyond its bound is refused naming the field and the bound") {
  TempDir dir;
  for (const char* layers : {"encoder_layers=2147483648", "encoder_layers=100000000", "decoder_layers=99999999999"}) {
    INFO(layers);
    require_runtime_error(run_attnlab(dir, {"info", "--arch", "transformer_tiny", "--model-override", layers}),
                          {"layers must be at most 1024"});
  }
  require_runtime_error(run_attnlab(dir, {"info", "--arch", "transformer_tiny", "--vocab", "100000000000"}),
                        {"src_vocab_size must be at most 16777216"});
  require_runtime_error(run_attnlab(dir, {"info", "--arch", "transformer_tiny", "--model-override",
                                          "max_target_positions=1000000000"}),
                        {"max_target_positions must be at most 16777216"});
  // Every size within its bound, the whole beyond what can be built: refused before allocating it.
  require_runtime_error(run_attnlab(dir, {"info", "--arch", "transformer_tiny", "--model-override",
                                          "encoder_ffn_embed_dim=16777216", "--model-override",
                                          "decoder_ffn_embed_dim=16777216"}),
                        {"more than the 4.29e+09 this toolkit builds"});
  require_success(run_attnlab(dir, {"info", "--arch", "transformer_tiny", "--model-override", "encoder_layers=12"}));
}

TEST_CASE("a batch size, search or schedule flag out of range is a command-line error naming the flag") {
  TempDir dir;
  const std::vector<std::vector<std::string>> decoders = {
      {"generate", "data", "--path", "ckpt"}, {"translate", "--path", "ckpt"}, {"validate", "data", "--path", "ckpt"}};
  for (const std::vector<std::string>& command : decoders)
    for (const char* flag : {"--batch-size", "--max-tokens"})
      for (const char* value : {"0", "-1"}) {
        std::vector<std::string> args = command;
        args.insert(args.end(), {flag, value});
        INFO(args.front() << " " << flag << " " << value);
        // validate names its batch flag --max-sentences first, as fairseq-validate does
        require_command_line_error(run_attnlab(dir, args),
                                   args.front() == "validate" && std::string(flag) == "--batch-size" ? "--max-sentences"
                                                                                                   : flag);
      }
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"--min-len", "-1"}, {"--nbest", "0"}, {"--sampling-topk", "0"}, {"--sampling-topk", "-5"},
           {"--sampling-topp", "0"}, {"--sampling-topp", "-0.5"}, {"--sampling-topp", "1.5"}}) {
    INFO(flag << " " << value);
    require_command_line_error(run_attnlab(dir, {"generate", "data", "--path", "ckpt", "--sampling", flag, value}),
                               flag);
  }
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"--max-tokens", "0"}, {"--max-tokens", "-1"}, {"--max-sentences", "0"}, {"--lr-period-updates", "0"},
           {"--lr-period-updates", "-5"}, {"--warmup-init-lr", "-5"}, {"--adam-eps", "inf"}, {"--adam-eps", "0"}}) {
    INFO(flag << " " << value);
    require_command_line_error(run_attnlab(dir, {"train", "data", "--lr-scheduler", "cosine", flag, value}), flag);
  }
  // -1, the documented "unset", is still taken: these fail on the missing data, not on the flag.
  for (const auto& [flag, value] :
       std::vector<std::pair<std::string, std::string>>{{"--lr-period-updates", "-1"}, {"--warmup-init-lr", "-1"}})
    require_runtime_error(run_attnlab(dir, {"train", "no-such-data", "--max-tokens", "100", flag, value}),
                          {"no-such-data"});
  require_runtime_error(run_attnlab(dir, {"generate", "data", "--path", "no-such-ckpt", "--sampling", "--sampling-topk",
                                          "-1", "--sampling-topp", "-1"}),
                        {"no-such-ckpt"});
}

TEST_CASE("a non-integer given to an integer flag is a command-line error saying the flag must be an integer") {
  TempDir dir;
  // The model flags became config overrides read after the data: "config: 'encoder_layers'
  // expects a number, got '1.5'"; the others read "Could not convert: --update-freq = 1.5".
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"--encoder-layers", "1.5"}, {"--decoder-embed-dim", "1e3"}, {"--update-freq", "1.5"},
           {"--max-tokens", "100.5"}, {"--log-interval", "ten"}}) {
    INFO(flag << " " << value);
    require_command_line_error(run_attnlab(dir, {"train", "data", flag, value}),
                               flag + ": must be an integer, got '" + value + "'");
  }
  require_command_line_error(run_attnlab(dir, {"train", "data", "--dropout", "0.x"}),
                             "--dropout: must be a number, got '0.x'");
  require_command_line_error(run_attnlab(dir, {"train", "data", "--encoder-kernel-size-list", "[3,x]"}),
                             "--encoder-kernel-size-list: must be a list of integers");
  require_command_line_error(run_attnlab(dir, {"generate", "data", "--path", "ckpt", "--beam", "1.5"}),
                             "--beam: must be an integer, got '1.5'");
  // An unsigned flag read "-1" as 2^64 - 1 and trained with that seed.
  require_command_line_error(run_attnlab(dir, {"train", "data", "--seed", "-1"}),
                             "--seed: must be a non-negative integer, got '-1'");
}

TEST_CASE("a mixer kind its place cannot take is refused naming the mixer flag, or the field of an override") {
  TempDir dir;
  // An unknown rule in decoder self-attention surfaced only when the model was built, naming nothing.
  require_command_line_error(run_attnlab(dir, {"train", "data", "--decoder-self-mixer", "kernel:t2r+nope"}),
                             "--decoder-self-mixer: unknown update rule 'nope'");
  require_command_line_error(run_attnlab(dir, {"train", "data", "--cross-mixer", "softmax,conv"}),
                             "--cross-mixer: unknown or unsupported mixer 'conv'");
  require_command_line_error(run_attnlab(dir, {"train", "data", "--decoder-self-mixer", "linformer"}),
                             "--decoder-self-mixer: linformer cannot be causal");
  require_runtime_error(run_attnlab(dir, {"info", "--arch", "transformer_tiny", "--model-override",
                                          "decoder_self_mixer=kernel:t2r+nope"}),
                        {"config: decoder_self_mixer: unknown update rule 'nope'"});
}

TEST_CASE("inspect refuses an empty --target or --source instead of taking it as left out") {
  TempDir dir;
  // An empty --target decoded the model's own translation, as if there were none.
  require_command_line_error(
      run_attnlab(dir, {"inspect", "--path", "ckpt", "--source", "a sentence", "--target", "", "--out", "maps"}),
      "--target: is empty");
  require_command_line_error(
      run_attnlab(dir, {"inspect", "--path", "ckpt", "--source", "", "--data", ".", "--out", "maps"}),
      "--source: is empty");
}
