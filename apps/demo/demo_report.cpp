// The demo's report. See demo_report.hpp.
#include "apps/demo/demo_report.hpp"

#include <fmt/core.h>

#include "apps/inspection/attention_capture.hpp"
#include "apps/inspection/map_figures.hpp"
#include "apps/plotting/training_log.hpp"
#include "data/text_io.hpp"

namespace attn::app {
namespace {

ReportAttention sentence_attention(TrainedModel& trained, const std::string& checkpoint, const std::string& source,
                                   const std::string& reference) {
  const SentenceAttention s = capture_attention_of_text(trained, checkpoint, source, reference, "demo report");
  ReportAttention a{fmt::format("{}  →  {}", source, reference), {}};
  for (int place : kReportPlaceOrder) {
    std::vector<ReportFigure> figures;
    for (MapFigure& f : sentence_figures(s, trained.model->config(), {place}))
      figures.push_back({fmt::format("layer {} · head {}", f.layer + 1, f.head + 1), std::move(f.png)});
    a.groups.emplace_back(kPlaceTitles[place], std::move(figures));
  }
  return a;
}

}  // namespace

ReportContent demo_report_content(const DemoReportInput& input) {
  ReportContent c{input.title, input.headline, input.facts, {}, input.examples, {}, input.tables};
  const std::vector<plot::Run> runs = {{input.run_name, plot::read_training_log(input.train_log)}};
  for (const plot::XAxis x : {plot::XAxis::kUpdates, plot::XAxis::kMinutes}) {
    const auto canvas =
        plot::draw_line_charts(plot::training_panels(runs, {"loss", "ppl", "lr", "tokens_per_second"}, x), 2);
    c.curves.push_back({x == plot::XAxis::kUpdates ? "against updates" : "against training minutes", canvas->png()});
  }
  if (!input.attention_pairs.empty()) {
    TrainedModel trained = load_trained_model(input.checkpoint, Device::cpu());
    for (const auto& [source, reference] : input.attention_pairs)
      c.attention.push_back(sentence_attention(trained, input.checkpoint, source, reference));
  }
  c.attention.insert(c.attention.end(), input.extra_attention.begin(), input.extra_attention.end());
  return c;
}

size_t write_demo_report(const DemoReportInput& input, const std::string& path) {
  const std::string html = render_report_html(demo_report_content(input));
  data::write_file_atomic(path, html);
  return html.size();
}

}  // namespace attn::app
