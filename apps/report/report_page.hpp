// The demo's report: one self-contained HTML page (no scripts, no network: its figures are PNG
// data URIs, its style inline) that any browser opens from disk. Sections: the results (BLEU
// with its signature and the run's facts), the training curves, example translations beside
// their references, the attention maps of a few sentences (one collapsible group per place),
// and optionally a comparison table of variants.
#pragma once
#include <string>
#include <vector>

namespace attn::app {

struct ReportExample {
  std::string source, reference, hypothesis;
};

struct ReportFigure {
  std::string caption;
  std::string png;  // the image's bytes
};

// One sentence's maps: a group of figures per place.
struct ReportAttention {
  std::string caption;  // the sentence pair
  std::vector<std::pair<std::string, std::vector<ReportFigure>>> groups;  // place title, its heads
};

struct ReportTable {
  std::string caption;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::string note;  // a paragraph under the caption (none when empty)
};

struct ReportContent {
  std::string title;
  std::string headline;                                    // e.g. "sacreBLEU 10.3"
  std::vector<std::pair<std::string, std::string>> facts;  // name, value (signature, throughput, memory, ...)
  std::vector<ReportFigure> curves;
  std::vector<ReportExample> examples;
  std::vector<ReportAttention> attention;
  std::vector<ReportTable> tables;
};

std::string render_report_html(const ReportContent& content);

// Text with & < > " ' escaped for HTML.
std::string html_escaped(const std::string& text);
// RFC 4648 base64 of bytes.
std::string base64(const std::string& bytes);

}  // namespace attn::app
