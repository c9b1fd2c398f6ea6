// The variants' comparison. See variant_comparison.hpp.
#include "apps/demo/variant_comparison.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "apps/inspection/attention_capture.hpp"
#include "apps/inspection/map_figures.hpp"
#include "apps/training/checkpoint_conversion.hpp"
#include "autograd/autograd.hpp"
#include "core/ops.hpp"
#include "data/text_io.hpp"

namespace attn::app {
namespace fs = std::filesystem;
namespace {

constexpr int64_t kStateSourceTokens = 20, kStateTargetTokens = 50;

// The decoding state of one sentence after kStateTargetTokens greedy steps over a source of
// kStateSourceTokens tokens (its values do not matter, only its length).
int64_t decoding_state_bytes(nn::EncoderDecoderModel& model) {
  NoGradGuard no_grad;
  model.eval();
  Tensor source = full({1, kStateSourceTokens}, 4.0, DType::Int64);
  source.narrow(1, kStateSourceTokens - 1, 1).fill_(double(model.config().eos_idx));
  nn::DecoderState state = model.init_decoder_state(model.encode(source));
  Tensor tokens = full({1}, double(model.config().eos_idx), DType::Int64);
  for (int64_t t = 0; t < kStateTargetTokens; ++t) tokens = ops::argmax(model.decode_step(tokens, state), -1);
  return state.attention_bytes();
}

VariantResult run_variant(const TeachingVariant& v, const ComparisonSetup& setup) {
  const fs::path dir = fs::path(setup.root) / v.name;
  TrainerOptions o = setup.training;
  o.arch = v.arch;
  o.save_dir = dir.string();
  o.max_update = setup.updates;
  o.checkpoints.save_interval_updates = 0;  // the comparison scores checkpoint_last alone
  o.max_epoch = 0;
  o.max_time_minutes = 0;
  if (v.finetuned) {  // swap: the comparison's transformer, converted once
    const std::string converted = (dir / "converted").string();
    if (!fs::exists(converted + ".json"))
      convert_checkpoint({(fs::path(setup.root) / "transformer" / "checkpoint_last").string(), converted, v.arch,
                          o.model_overrides, o.seed});
    o.finetune_from_model = converted;
  }
  fmt::print("\n== {} ({}{}) for {} updates -> {}\n", v.name, v.arch,
             v.finetuned ? ", swapped from the transformer and finetuned" : "", setup.updates, dir.string());
  Trainer trainer(o);
  trainer.train();
  VariantResult r{.name = v.name, .arch = v.arch, .parameters = trainer.model().num_parameters(),
                  .updates = setup.updates, .checkpoint = (dir / "checkpoint_last").string()};
  r.train_minutes = last_training_summary(dir.string()).value("elapsed", 0.0) / 60;
  const ComparisonSetup::Scored scored = setup.score_test_set(r.checkpoint, (dir / "gen").string());
  r.bleu = scored.bleu;
  r.decode_tokens_per_second = scored.seconds > 0 ? double(scored.tokens) / scored.seconds : 0;
  r.state_bytes = decoding_state_bytes(trainer.model());
  return r;
}

std::string markdown(const ReportTable& t) {
  std::string md = "| " + fmt::format("{}", fmt::join(t.header, " | ")) + " |\n|";
  for (size_t i = 0; i < t.header.size(); ++i) md += "---|";
  md += "\n";
  for (const auto& row : t.rows) md += "| " + fmt::format("{}", fmt::join(row, " | ")) + " |\n";
  return md;
}

}  // namespace

const std::vector<TeachingVariant>& teaching_variants() {
  static const std::vector<TeachingVariant> variants = {
      {"transformer", "transformer_tiny"}, {"lightconv", "lightconv_tiny"}, {"dynamicconv", "dynamicconv_tiny"},
      {"linformer", "linformer_tiny"},     {"elu", "elu_tiny"},             {"rfa", "rfa_tiny"},
      {"t2r", "t2r_tiny"},                 {"t2r_finetuned", "t2r_tiny", true}, {"decay", "decay_tiny"}};
  return variants;
}

std::vector<VariantResult> compare_variants(const ComparisonSetup& setup) {
  const auto chosen = [&](const std::string& name) {
    return setup.only.empty() || std::find(setup.only.begin(), setup.only.end(), name) != setup.only.end();
  };
  for (const std::string& name : setup.only)
    ATTN_CHECK(std::any_of(teaching_variants().begin(), teaching_variants().end(),
                           [&](const TeachingVariant& v) { return v.name == name; }),
               "demo --compare: unknown variant '{}'", name);
  std::vector<VariantResult> results;
  for (const TeachingVariant& v : teaching_variants()) {
    // The finetuned T2R starts from the comparison's transformer: that one is trained first.
    const bool needed = v.name == "transformer" && chosen("t2r_finetuned");
    if (chosen(v.name) || needed) results.push_back(run_variant(v, setup));
  }
  const ReportTable table = comparison_table(results, setup.updates);
  data::write_file_atomic((fs::path(setup.root) / "table.md").string(), markdown(table));
  nlohmann::json rows = nlohmann::json::array();
  for (const VariantResult& r : results)
    rows.push_back({{"name", r.name}, {"arch", r.arch}, {"parameters", r.parameters}, {"updates", r.updates},
                    {"bleu", r.bleu}, {"train_minutes", r.train_minutes},
                    {"decode_tokens_per_second", r.decode_tokens_per_second}, {"state_bytes", r.state_bytes}});
  data::write_file_atomic((fs::path(setup.root) / "table.json").string(), rows.dump(2) + "\n");
  return results;
}

ReportTable comparison_table(const std::vector<VariantResult>& results, int64_t updates) {
  ReportTable t{fmt::format("Variants compared: {} updates each (teaching-scale Table 2 of the T2R paper)", updates),
                {"model", "preset", "parameters", "sacreBLEU", "training minutes", "decode tokens/s",
                 fmt::format("state KiB ({} → {} tokens)", kStateSourceTokens, kStateTargetTokens)},
                {},
                {}};
  for (const VariantResult& r : results)
    t.rows.push_back({r.name, r.arch, fmt::format("{:.2f}M", double(r.parameters) / 1e6), fmt::format("{:.1f}", r.bleu),
                      fmt::format("{:.1f}", r.train_minutes), fmt::format("{:.0f}", r.decode_tokens_per_second),
                      fmt::format("{:.1f}", double(r.state_bytes) / 1024)});
  return t;
}

ReportAttention comparison_maps(const std::vector<VariantResult>& results, const ComparisonSetup& setup) {
  ReportAttention a{fmt::format("each variant's last layer, head 1: {}  →  {}", setup.source, setup.reference), {}};
  for (int place : kReportPlaceOrder) a.groups.emplace_back(kPlaceTitles[place], std::vector<ReportFigure>{});
  for (const VariantResult& r : results) {
    TrainedModel trained = load_trained_model(r.checkpoint, Device::cpu());
    const SentenceAttention s =
        capture_attention_of_text(trained, r.checkpoint, setup.source, setup.reference, "demo --compare");
    size_t group = 0;
    for (int place : kReportPlaceOrder) {
      const auto figures = sentence_figures(s, trained.model->config(), {place});
      const int64_t last_layer = figures.empty() ? 0 : figures.back().layer;
      for (const MapFigure& f : figures)
        if (f.layer == last_layer && f.head == 0) a.groups[group].second.push_back({r.name, f.png});
      ++group;
    }
  }
  return a;
}

}  // namespace attn::app
