// The demo's report page, DEMO/report.html (apps/report/report_page.hpp): the test-set BLEU
// with its signature and the run's facts, the training curves of DEMO/checkpoints, example
// translations beside their references, and every head's attention map for a few test
// sentences, forced through their references by the averaged model.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "apps/report/report_page.hpp"

namespace attn::app {

struct DemoReportInput {
  std::string title;
  std::string headline;                                    // "sacreBLEU 10.4"
  std::vector<std::pair<std::string, std::string>> facts;  // name, value
  std::vector<ReportExample> examples;
  std::string train_log;   // checkpoints/train_log.jsonl
  std::string run_name;    // the curves' legend (the model's arch)
  std::string checkpoint;  // the model whose attention is shown
  std::vector<std::pair<std::string, std::string>> attention_pairs;  // raw source, raw reference
  std::vector<ReportTable> tables;
  std::vector<ReportAttention> extra_attention;  // maps made elsewhere (the variants side by side)
};

// The page's content: curves drawn, attention captured and drawn.
ReportContent demo_report_content(const DemoReportInput& input);

// Writes the page to path atomically; returns its size in bytes.
size_t write_demo_report(const DemoReportInput& input, const std::string& path);

}  // namespace attn::app
