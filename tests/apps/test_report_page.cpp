// The demo's report page (apps/report/report_page.hpp): base64 and HTML escaping against known
// values, and the page itself opened in a real browser (Debian's chromium, headless): every
// image decodes, nothing reaches the console, the screenshot is drawn. The same checks are
// shown to fail on a page with a broken image and on one with a script error. Without
// chromium the program reports itself skipped (exit 77), not passed.
#include <catch.hpp>

#include <sys/wait.h>

#include <cstdlib>
#include <sstream>

#include <fmt/core.h>

#include "apps/plotting/heat_map.hpp"
#include "apps/plotting/line_chart.hpp"
#include "apps/report/report_page.hpp"
#include "test_support.hpp"

using namespace attn;
using namespace attn::app;
using namespace attn::test;

namespace {

bool has_chromium() { return std::system("command -v chromium > /dev/null 2>&1") == 0; }

struct BrowserRun {
  std::string dom, console;  // the DOM after load; the page's console lines
  bool screenshot_drawn = false;
};

// Counts the page's decoded images into its title once it has loaded.
constexpr const char* kImageProbe =
    "<script>window.addEventListener('load', () => { const all = [...document.images]; document.title = 'images ' + "
    "all.filter(i => i.complete && i.naturalWidth > 0).length + '/' + all.length; });</script>";

BrowserRun open_in_chromium(const TempDir& dir, const std::string& html) {
  std::string probed = html;
  probed.insert(probed.rfind("</body>"), kImageProbe);
  write_file(dir.file("page.html"), probed);
  const std::string flags = "timeout -k 5 60 chromium --headless --no-sandbox --disable-gpu --enable-logging=stderr "
                            "--v=0 --user-data-dir=" + dir.file("profile");
  const std::string url = "file://" + dir.file("page.html");
  REQUIRE(std::system(fmt::format("{} --dump-dom {} > {} 2> {}", flags, url, dir.file("dom"), dir.file("err")).c_str()) == 0);
  BrowserRun run{read_file(dir.file("dom")), "", false};
  std::istringstream err(read_file(dir.file("err")));
  for (std::string line; std::getline(err, line);)
    if (line.find(":CONSOLE") != std::string::npos) run.console += line + "\n";
  REQUIRE(std::system(fmt::format("{} --window-size=1200,1600 --screenshot={} {} > /dev/null 2>&1", flags,
                                  dir.file("shot.png"), url).c_str()) == 0);
  const std::string shot = read_file(dir.file("shot.png"));
  run.screenshot_drawn = shot.size() > 10000 && shot.substr(1, 3) == "PNG";  // a blank page compresses to ~5 KB
  return run;
}

ReportContent sample_report() {
  ReportContent c;
  c.title = "attnlab demo <test> & report";
  c.headline = "sacreBLEU 12.3";
  c.facts = {{"signature", "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.0.0"}, {"updates", "1,234"}};
  plot::Panel panel{"loss", "updates", false, {{"run", {0, 1, 2}, {3, 2, 1.5}, false}}};
  c.curves = {{"training curves", plot::draw_line_charts({panel}, 1)->png()}};
  c.examples = {{"He says <b>one</b> thing.", "Er sagt \"eins\".", "<script>alert('x')</script>"}};
  const plot::HeatMap map{"cross · layer 1 · head 1", {"Er", "sagt", "</s>"}, {"He", "says", "</s>"},
                          {0.8, 0.1, 0.1, 0.2, 0.7, 0.1, 0.1, 0.1, 0.8}};
  c.attention = {{"He says. → Er sagt.", {{"cross-attention", {{"head 1", plot::draw_heat_map(map)->png()}}},
                                           {"encoder self-attention", {{"head 1", plot::draw_heat_map(map)->png()}}}}}};
  c.tables = {{"variants", {"model", "BLEU"}, {{"transformer", "12.3"}, {"t2r", "11.0"}}, ""},
              {"memory", {"token", "p"}, {{"sagt", "0.5"}}, "Each token's <p> & more."}};
  return c;
}

}  // namespace

TEST_CASE("report page: base64 and HTML escaping") {
  CHECK(base64("") == "");
  CHECK(base64("f") == "Zg==");
  CHECK(base64("fo") == "Zm8=");
  CHECK(base64("foo") == "Zm9v");
  CHECK(base64("foobar") == "Zm9vYmFy");
  CHECK(base64(std::string("\xff\xfe\x00", 3)) == "//4A");
  CHECK(html_escaped("<a href=\"x\">'&'</a>") == "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
}

TEST_CASE("report page: self-contained, escaped, every section present") {
  const std::string html = render_report_html(sample_report());
  CHECK(html.find("<title>attnlab demo &lt;test&gt; &amp; report</title>") != std::string::npos);
  CHECK(html.find("<script") == std::string::npos);  // the example's script is text, not code
  CHECK(html.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;") != std::string::npos);
  CHECK(html.find("http") == std::string::npos);  // nothing fetched from the network
  for (const char* section : {"Results", "Training curves", "Example translations", "variants", "Attention"})
    CHECK(html.find(fmt::format("<h2>{}</h2>", section)) != std::string::npos);
  CHECK(html.find("<h2>memory</h2>\n<p>Each token&#39;s &lt;p&gt; &amp; more.</p>\n<table>") != std::string::npos);
  CHECK(html.find("<h2>variants</h2>\n<table>") != std::string::npos);  // no note: no paragraph
  CHECK(html.find("<details open><summary>cross-attention") != std::string::npos);
  CHECK(html.find("<td>updates</td><td>1,234</td>") != std::string::npos);  // a fact: aligned as text
  CHECK(html.find("<td>transformer</td><td class=\"num\">12.3</td>") != std::string::npos);  // a column of numbers
  size_t images = 0;
  for (size_t at = html.find("<img "); at != std::string::npos; at = html.find("<img ", at + 1)) ++images;
  CHECK(images == 3);
}

TEST_CASE("report page: a headless browser loads every image without a console message") {
  if (!has_chromium()) skip_program("chromium is not installed (apt-get install chromium); the page was not opened");
  TempDir dir;
  const BrowserRun page = open_in_chromium(dir, render_report_html(sample_report()));
  CHECK(page.dom.find("<title>images 3/3</title>") != std::string::npos);
  CHECK(page.console.empty());
  CHECK(page.screenshot_drawn);

  // The same checks catch a broken image and a script error.
  const BrowserRun broken = open_in_chromium(
      dir, "<!DOCTYPE html><html><head><title>t</title></head><body><img src=\"data:image/png;base64,AAAA\">"
           "<script>undefined_function();</script></body></html>");
  CHECK(broken.dom.find("<title>images 0/1</title>") != std::string::npos);
  CHECK(broken.console.find("undefined_function") != std::string::npos);
}
