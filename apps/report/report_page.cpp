// The report page. See report_page.hpp.
#include "apps/report/report_page.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/core.h>

namespace attn::app {

std::string html_escaped(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string base64(const std::string& bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t group = 0;
    for (size_t k = 0; k < 3; ++k) group = group << 8 | (k < n ? uint8_t(bytes[i + k]) : 0u);
    for (size_t k = 0; k < 4; ++k) out += k <= n ? kAlphabet[group >> (18 - 6 * k) & 63] : '=';
  }
  return out;
}

namespace {

constexpr const char* kStyle = R"(
body { font-family: "DejaVu Sans", sans-serif; margin: 2em auto; max-width: 1200px; color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { margin-top: 1.6em; border-bottom: 1px solid #ccc; }
.headline { font-size: 2em; font-weight: bold; color: #1f77b4; }
table { border-collapse: collapse; margin: 0.8em 0; }
td, th { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
th { background: #f2f2f2; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.figures { display: flex; flex-wrap: wrap; gap: 0.8em; align-items: flex-start; }
figure { margin: 0; } figcaption { font-size: 0.85em; color: #555; }
img { max-width: 100%; height: auto; } code { font-size: 0.9em; }
summary { cursor: pointer; font-weight: bold; margin: 0.4em 0; }
)";

std::string figure_html(const ReportFigure& f) {
  return fmt::format("<figure><img alt=\"{0}\" src=\"data:image/png;base64,{1}\"><figcaption>{0}</figcaption></figure>\n",
                     html_escaped(f.caption), base64(f.png));
}

std::string figures_html(const std::vector<ReportFigure>& figures) {
  std::string html = "<div class=\"figures\">\n";
  for (const ReportFigure& f : figures) html += figure_html(f);
  return html + "</div>\n";
}

bool is_number(const std::string& cell) {
  return !cell.empty() && cell.find_first_not_of("0123456789.,-+×% ") == std::string::npos;
}

std::string table_html(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::string html = "<table>\n";
  if (!header.empty()) {
    html += "<tr>";
    for (const std::string& h : header) html += "<th>" + html_escaped(h) + "</th>";
    html += "</tr>\n";
  }
  // A table with a header has columns of like values: its numbers are right-aligned to line up
  // their digits. Without one it lists facts, name and value, each value read on its own.
  const bool columns = !header.empty();
  for (const auto& row : rows) {
    html += "<tr>";
    for (const std::string& cell : row)
      html += fmt::format("<td{}>{}</td>", columns && is_number(cell) ? " class=\"num\"" : "", html_escaped(cell));
    html += "</tr>\n";
  }
  return html + "</table>\n";
}

}  // namespace

std::string render_report_html(const ReportContent& c) {
  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{0}</title>\n<style>{1}</style>\n"
      "</head>\n<body>\n<h1>{0}</h1>\n",
      html_escaped(c.title), kStyle);
  if (!c.headline.empty()) html += fmt::format("<p class=\"headline\">{}</p>\n", html_escaped(c.headline));
  if (!c.facts.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& [name, value] : c.facts) rows.push_back({name, value});
    html += "<h2>Results</h2>\n" + table_html({}, rows);
  }
  if (!c.curves.empty()) html += "<h2>Training curves</h2>\n" + figures_html(c.curves);
  if (!c.examples.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const ReportExample& e : c.examples) rows.push_back({e.source, e.reference, e.hypothesis});
    html += "<h2>Example translations</h2>\n" + table_html({"source", "reference", "model"}, rows);
  }
  for (const ReportTable& t : c.tables) {
    html += fmt::format("<h2>{}</h2>\n", html_escaped(t.caption));
    if (!t.note.empty()) html += fmt::format("<p>{}</p>\n", html_escaped(t.note));
    html += table_html(t.header, t.rows);
  }
  if (!c.attention.empty()) html += "<h2>Attention</h2>\n";
  for (const ReportAttention& a : c.attention) {
    html += fmt::format("<h3>{}</h3>\n", html_escaped(a.caption));
    for (size_t g = 0; g < a.groups.size(); ++g)
      html += fmt::format("<details{}><summary>{}</summary>\n{}</details>\n", g == 0 ? " open" : "",
                          html_escaped(a.groups[g].first), figures_html(a.groups[g].second));
  }
  return html + "</body>\n</html>\n";
}

}  // namespace attn::app
