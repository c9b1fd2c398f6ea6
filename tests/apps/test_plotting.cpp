// Figures (apps/plotting): axis ticks at 1-2-5 steps (also on log axes, and over ranges finer
// than their values' rounding), a constant series' axis around its value, training logs read
// in update order with a resumed run's repeated updates replaced and validations placed at
// their update's time, runs each with a label and a look of their own, text that is not UTF-8
// drawn all the same, heat-map pixels in the scale's colours, PNG bytes that decode to the
// promised size.
#include <catch.hpp>

#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>
#include <tuple>

#include <fmt/core.h>

#include "apps/plotting/colour_scale.hpp"
#include "apps/plotting/heat_map.hpp"
#include "apps/plotting/line_chart.hpp"
#include "apps/plotting/training_log.hpp"
#include "test_support.hpp"

using namespace attn;
using namespace attn::plot;
using namespace attn::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

struct ReadState {
  const std::string* bytes;
  size_t at = 0;
};

cairo_status_t read_bytes(void* closure, unsigned char* data, unsigned int length) {
  auto* state = static_cast<ReadState*>(closure);
  if (state->at + length > state->bytes->size()) return CAIRO_STATUS_READ_ERROR;
  std::memcpy(data, state->bytes->data() + state->at, length);
  state->at += length;
  return CAIRO_STATUS_SUCCESS;
}

// The decoded PNG's pixels as 0xRRGGBB, with its size.
struct Pixels {
  int width = 0, height = 0;
  std::vector<uint32_t> rgb;
  static bool near(uint32_t p, Colour c) {  // within rounding
    return std::abs(int(p >> 16 & 255) - int(c.r * 255)) <= 2 && std::abs(int(p >> 8 & 255) - int(c.g * 255)) <= 2 &&
           std::abs(int(p & 255) - int(c.b * 255)) <= 2;
  }
  bool has(Colour c) const {
    return std::any_of(rgb.begin(), rgb.end(), [&](uint32_t p) { return near(p, c); });
  }
  // The columns of the pixels of colour c at rows `from_row` and below.
  std::vector<int> columns_of(Colour c, int from_row) const {
    std::vector<int> columns;
    for (int y = from_row; y < height; ++y)
      for (int x = 0; x < width; ++x)
        if (near(rgb[size_t(y * width + x)], c)) columns.push_back(x);
    return columns;
  }
};

Pixels decode(const std::string& png) {
  ReadState state{&png};
  cairo_surface_t* surface = cairo_image_surface_create_from_png_stream(read_bytes, &state);
  REQUIRE(cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS);
  Pixels p{cairo_image_surface_get_width(surface), cairo_image_surface_get_height(surface), {}};
  const unsigned char* data = cairo_image_surface_get_data(surface);
  const int stride = cairo_image_surface_get_stride(surface);
  for (int y = 0; y < p.height; ++y)
    for (int x = 0; x < p.width; ++x)
      p.rgb.push_back(reinterpret_cast<const uint32_t*>(data + y * stride)[x] & 0xffffff);
  cairo_surface_destroy(surface);
  return p;
}

}  // namespace

TEST_CASE("plot: ticks at 1, 2 or 5 times a power of ten") {
  CHECK(nice_ticks(0, 1) == std::vector<double>{0, 0.2, 0.4, 0.6000000000000001, 0.8, 1});
  CHECK(nice_ticks(3, 2000) == std::vector<double>{500, 1000, 1500, 2000});
  CHECK(nice_ticks(-0.5, 0.5).front() == -0.4);
  CHECK(nice_ticks(7, 7) == std::vector<double>{7});
}

TEST_CASE("plot: a constant series' axis spans a few percent around its value, positive for a positive value") {
  CHECK(axis_range(2, 3) == std::pair<double, double>{2, 3});
  const auto [low, high] = axis_range(0.001, 0.001);  // a fixed learning rate
  CHECK(low == Approx(0.00095));
  CHECK(high == Approx(0.00105));
  const std::vector<double> ticks = nice_ticks(low, high);
  CHECK(ticks.front() > 0);
  CHECK(std::find_if(ticks.begin(), ticks.end(), [](double t) { return tick_label(t) == "0.001"; }) != ticks.end());
  CHECK(axis_range(-4, -4) == std::pair<double, double>{-4.2, -3.8});
  CHECK(axis_range(0, 0) == std::pair<double, double>{-0.5, 0.5});
}

TEST_CASE("plot: tick labels write whole numbers in full and others to 4 significant digits") {
  CHECK(tick_label(14000) == "14000");
  CHECK(tick_label(1e6) == "1000000");
  CHECK(tick_label(-0.0) == "0");
  CHECK(tick_label(0.6000000000000001) == "0.6");
  CHECK(tick_label(0.0025) == "0.0025");
  // Ticks closer than 4 digits tell apart get the digits that do.
  CHECK(tick_labels({0.5, 1.0, 1.5}) == std::vector<std::string>{"0.5", "1", "1.5"});
  const std::vector<double> fine = nice_ticks(4.000001, 4.000002);
  const std::vector<std::string> fine_labels = tick_labels(fine);
  REQUIRE(fine.size() >= 2);
  CHECK(tick_label(fine.front()) == tick_label(fine.back()));  // "4" each at 4 digits
  CHECK(std::adjacent_find(fine_labels.begin(), fine_labels.end()) == fine_labels.end());
  for (size_t i = 0; i < fine.size(); ++i) CHECK(std::abs(std::stod(fine_labels[i]) - fine[i]) < 1e-9);
  CHECK(tick_label(2.5e8) == "2.5e+08");
}

TEST_CASE("plot: a training log is read in update order, a resumed run's repeated updates replacing the old ones") {
  TempDir dir;
  write_file(dir.file("log.jsonl"),
             "{\"type\": \"train\", \"update\": 1, \"loss\": 9, \"elapsed\": 10}\n"
             "{\"type\": \"train\", \"update\": 2, \"loss\": 8, \"elapsed\": 20}\n"
             "{\"type\": \"valid\", \"update\": 2, \"loss\": 8.5}\n"
             "\n"
             "{\"type\": \"train\", \"update\": 2, \"loss\": 7, \"elapsed\": 21}\n"  // resumed from update 1
             "{\"type\": \"train\", \"update\": 3, \"loss\": 6, \"elapsed\": 31}\n"
             "{\"type\": \"valid\", \"update\": 3, \"loss\": 6.5}\n"
             "{\"type\": \"done\", \"update\": 3, \"tokens_per_second\": 900}\n");  // a summary, not a curve
  const std::vector<LogRecord> records = read_training_log(dir.file("log.jsonl"));
  REQUIRE(records.size() == 4);  // the first run's update 2 and its validation are gone
  CHECK(records[1].values.at("loss") == 7);
  CHECK(records[3].valid);
  CHECK(records[3].elapsed == 31);  // a validation takes its update's training time
  const std::vector<Panel> panels = training_panels({{"run", records}}, {"loss"}, XAxis::kMinutes);
  REQUIRE(panels.size() == 1);
  REQUIRE(panels[0].series.size() == 2);  // training line, validation squares
  CHECK(panels[0].series[0].x == std::vector<double>{10.0 / 60, 21.0 / 60, 31.0 / 60});
  CHECK(panels[0].series[1].points_only);
  CHECK_THROWS_WITH(training_panels({{"run", records}}, {"bleu"}, XAxis::kUpdates), Contains("unknown metric 'bleu'"));

  write_file(dir.file("bad.jsonl"), "{\"type\": \"train\", \"update\": 1}\n{\"update\": 2}\n");
  CHECK_THROWS_WITH(read_training_log(dir.file("bad.jsonl")), Contains("bad.jsonl:2") && Contains("\"type\""));
  CHECK_THROWS_WITH(read_training_log(dir.file("missing.jsonl")), Contains("missing.jsonl"));
  write_file(dir.file("started.jsonl"), "");  // a run before its first progress line: no empty figure
  CHECK_THROWS_WITH(read_training_log(dir.file("started.jsonl")), Contains("started.jsonl") && Contains("no training"));
}

TEST_CASE("plot: of a run validated on several splits, the curve is the first split's") {
  TempDir dir;
  write_file(dir.file("log.jsonl"),
             "{\"type\": \"train\", \"update\": 1, \"loss\": 9, \"elapsed\": 10}\n"
             "{\"type\": \"valid\", \"subset\": \"valid1\", \"update\": 1, \"loss\": 8.5}\n"
             "{\"type\": \"valid\", \"subset\": \"test\", \"update\": 1, \"loss\": 7.5}\n"
             "{\"type\": \"valid\", \"subset\": \"valid1\", \"update\": 2, \"loss\": 6.5}\n");
  const std::vector<LogRecord> records = read_training_log(dir.file("log.jsonl"));
  REQUIRE(records.size() == 3);
  CHECK(records[1].subset == "valid1");
  CHECK(records[2].values.at("loss") == 6.5);
  // A log from before --valid-subset: its records are the default split's.
  write_file(dir.file("old.jsonl"), "{\"type\": \"valid\", \"update\": 1, \"loss\": 8.5}\n");
  CHECK(read_training_log(dir.file("old.jsonl")).at(0).subset == "valid");
}

TEST_CASE("plot: validations without their time take their update's, between and after the training records") {
  TempDir dir;
  write_file(dir.file("log.jsonl"),
             "{\"type\": \"train\", \"update\": 100, \"loss\": 9, \"elapsed\": 60}\n"
             "{\"type\": \"valid\", \"update\": 130, \"loss\": 8.5}\n"  // epoch ends between log lines
             "{\"type\": \"valid\", \"update\": 160, \"loss\": 8.4}\n"
             "{\"type\": \"train\", \"update\": 200, \"loss\": 8, \"elapsed\": 160}\n"
             "{\"type\": \"valid\", \"update\": 250, \"loss\": 8.3}\n"  // after the last training record
             "{\"type\": \"valid\", \"update\": 260, \"loss\": 8.2, \"elapsed\": 170}\n");  // timed by the trainer
  std::vector<double> times;
  for (const LogRecord& r : read_training_log(dir.file("log.jsonl")))
    if (r.valid) times.push_back(r.elapsed.value());
  CHECK(times == std::vector<double>{90, 120, 200, 170});
  write_file(dir.file("untimed.jsonl"), "{\"type\": \"valid\", \"update\": 1, \"loss\": 4}\n");
  CHECK_FALSE(read_training_log(dir.file("untimed.jsonl")).front().elapsed.has_value());  // nothing to time it by
}

TEST_CASE("plot: a heat map's cells take the scale's colours, from its lowest to its highest value") {
  const HeatMap map{"t", {"a", "b"}, {"x", "y", "z"}, {0.0, 0.25, 1.0, 0.5, 0.75, 0.0}};
  const Pixels p = decode(draw_heat_map(map)->png());
  CHECK(p.width > 3 * 22);
  CHECK(p.height > 2 * 22);
  for (double v : {0.0, 0.25, 0.5, 0.75, 1.0}) {
    INFO(v);
    CHECK(p.has(viridis(v)));
  }
  CHECK_FALSE(p.has(cool_warm(-1)));
  CHECK_THROWS_WITH(draw_heat_map({"t", {"a"}, {"x"}, {1.0, 2.0}}), Contains("2 values for 1 rows × 1 columns"));
}

TEST_CASE("plot: the cells of a large heat map meet without seams") {
  // 1,000 tokens make cells of 1.4 px: drawn as rectangles, each pixel a cell edge crosses was
  // blended with the white below, a grid of light seams over the map.
  constexpr size_t kTokens = 1000;
  const std::vector<std::string> tokens(kTokens, "w");
  const HeatMap map{"t", tokens, tokens, std::vector<double>(kTokens * kTokens, 1.0)};
  const Pixels p = decode(draw_heat_map(map)->png());
  const size_t full = size_t(std::count_if(p.rgb.begin(), p.rgb.end(), [](uint32_t px) {
    return Pixels::near(px, viridis(1.0));
  }));
  CHECK(full >= 1398 * 1398);  // the 1,400 px grid but its anti-aliased border
}

TEST_CASE("plot: a map with negative weights is drawn blue-white-red, symmetric about 0") {
  const HeatMap map{"t", {"a", "b"}, {"x", "y"}, {-0.5, 0.0, 0.25, 0.5}};
  const Pixels p = decode(draw_heat_map(map)->png());
  for (double t : {-1.0, 0.0, 0.5, 1.0}) {  // the values over their scale [−0.5, 0.5]
    INFO(t);
    CHECK(p.has(cool_warm(t)));
  }
  CHECK_FALSE(p.has(viridis(1.0)));
}

TEST_CASE("plot: each run's line is drawn in its own colour") {
  Panel panel{"loss", "updates", false, {{"a", {0, 1, 2}, {3, 2, 1}, false}, {"b", {0, 1, 2}, {1, 2, 3}, false}}};
  const Pixels p = decode(draw_line_charts({panel}, 1)->png());
  CHECK(p.width == 460);
  CHECK(p.has({0.122, 0.467, 0.706}));  // the palette's first two colours
  CHECK(p.has({1.000, 0.498, 0.055}));
}

TEST_CASE("plot: a range finer than its values' rounding ends its ticks, and is drawn as a constant") {
  // The ticks of 1e17 to 1e17 + 16 step by 5, less than the rounding of 1e17 (16): counted up
  // by adding the step, they never passed 1e17 and filled the memory.
  const std::vector<double> ticks = nice_ticks(1e17, 100000000000000016.0);
  CHECK(ticks.size() <= 6);
  CHECK(std::is_sorted(ticks.begin(), ticks.end()));
  CHECK(std::adjacent_find(ticks.begin(), ticks.end()) == ticks.end());
  CHECK(ticks.front() >= 1e17);
  CHECK(ticks.back() <= 100000000000000016.0);
  // A learning rate computed two ways, a loss a rounding apart, two updates a rounding apart:
  // each is one value, and takes a constant's axis.
  for (const auto& [low, high] : std::vector<std::pair<double, double>>{
           {0.0005, 0.0005000000000000001}, {1.0, 1.0000000000000002}, {1e17, 100000000000000016.0}}) {
    INFO(low << " to " << high);
    const auto [axis_low, axis_high] = axis_range(low, high);
    CHECK(axis_low == Approx(0.95 * low));
    CHECK(axis_high == Approx(1.05 * low));
    const Panel panel{"lr", "updates", false, {{"run", {50, 100}, {low, high}, false}}};
    const Panel updates{"loss", "updates", false, {{"run", {low, high}, {4.5, 4.0}, false}}};
    CHECK(decode(draw_line_charts({panel, updates})->png()).width == 2 * 460);
  }
  CHECK(axis_range(1e12, 1e12 + 10) == std::pair<double, double>{1e12, 1e12 + 10});  // far more than rounding apart
}

TEST_CASE("plot: log-axis ticks are 1, 2 and 5 times powers of ten, or powers alone, never half decades") {
  CHECK(log_ticks(1000, 10000) == std::vector<double>{1000, 2000, 5000, 10000});
  CHECK(log_ticks(15, 1200) == std::vector<double>{20, 50, 100, 200, 500, 1000});
  CHECK(log_ticks(0.9, 210) == std::vector<double>{1, 10, 100});  // 1-2-5 would be 8 ticks
  CHECK(log_ticks(1, 1e12) == std::vector<double>{1, 1e5, 1e10});  // every 5th power over 12 decades
  CHECK(log_ticks(30, 40) == nice_ticks(30, 40));  // no 1-2-5 value inside: even steps
  for (double t : log_ticks(700, 20000)) {
    INFO(t);
    CHECK(tick_label(t) != "3162");
  }
}

TEST_CASE("plot: each run has a look of its own, and a figure refuses more runs than it tells apart") {
  std::set<std::pair<std::tuple<double, double, double>, std::vector<double>>> looks;
  for (size_t i = 0; i < kMaxRuns; ++i) {
    const Look look = run_look(i);
    looks.insert({{look.colour.r, look.colour.g, look.colour.b}, look.dashes});
  }
  CHECK(looks.size() == kMaxRuns);
  Panel panel{"loss", "updates", false, {}};
  for (int i = 0; i < 7; ++i) panel.series.push_back({fmt::format("run {}", i), {0, 1}, {1, 2}, false});
  CHECK(decode(draw_line_charts({panel})->png()).has(run_look(6).colour));  // the 7th run, not the 1st's colour
  for (size_t i = 7; i <= kMaxRuns; ++i) panel.series.push_back({fmt::format("run {}", i), {0, 1}, {1, 2}, false});
  CHECK_THROWS_WITH(draw_line_charts({panel}), Contains("41 runs") && Contains("at most 40"));
  panel.series.pop_back();
  CHECK(draw_line_charts({panel})->height() < 1300);  // the legend of 40 and one panel
}

TEST_CASE("plot: runs' default labels are the ends of their paths that tell them apart") {
  CHECK(run_labels({"x/a/checkpoints", "x/b/checkpoints/train_log.jsonl"}) ==
        std::vector<std::string>{"a/checkpoints", "b/checkpoints"});
  CHECK(run_labels({"p/run", "p/q/run", "r/q/run"}) == std::vector<std::string>{"p/run", "p/q/run", "r/q/run"});
  CHECK(run_labels({"logs/one.jsonl", "logs/two.jsonl"}) == std::vector<std::string>{"one.jsonl", "two.jsonl"});
  CHECK(run_labels({"runs/base"}) == std::vector<std::string>{"base"});
  // The same run named twice, under any path: numbered.
  CHECK(run_labels({"run", "run/train_log.jsonl", "run/"}) == std::vector<std::string>{"run", "run (2)", "run (3)"});
  const std::vector<LogRecord> records = {{false, 1, 10.0, {{"loss", 3}}, ""}};
  CHECK_THROWS_WITH(training_panels({{"a", records}, {"b", records}, {"a", records}}, {"loss"}, XAxis::kUpdates),
                    Contains("runs 1 and 3 are both labelled 'a'"));
}

TEST_CASE("plot: a label that is not UTF-8 is drawn with U+FFFD, and a failed drawing writes no image") {
  Canvas measure(10, 10);
  CHECK(measure.text_width("run\xe9", 11) == measure.text_width("run\xef\xbf\xbd", 11));
  CHECK(measure.text_width("bad\xff", 11) > measure.text_width("bad", 11));
  for (const std::string label : {"run\xe9", "bad\xff", "\xef\xbf\xbe", "cut \xe2\x82"}) {  // U+FFFE: not a character
    INFO(label);
    const Panel panel{"loss", "updates", false, {{label, {0, 1}, {1, 2}, false}}};
    CHECK(decode(draw_line_charts({panel})->png()).has(kLightGrey));  // the grid, drawn after the legend
  }
  Canvas broken(10, 10);
  broken.text(5, 5, "x", 11, Align::kStart, kBlack, std::nan(""));  // cairo refuses the rotation
  CHECK_THROWS_WITH(broken.png(), Contains("drawing the image failed"));
}

TEST_CASE("plot: a resumed run's redone updates are replaced, over several resumes") {
  TempDir dir;
  std::string log;
  for (int update : {1, 2, 3, 4, 2, 3, 1, 2, 3, 4, 5})  // resumed at update 1, then at 0
    log += fmt::format("{{\"type\": \"train\", \"update\": {}, \"loss\": {}, \"elapsed\": {}}}\n", update, log.size(),
                       update);
  log += "{\"type\": \"valid\", \"update\": 5, \"loss\": 1}\n{\"type\": \"valid\", \"update\": 9, \"loss\": 1}\n";
  log += "{\"type\": \"train\", \"update\": 6, \"loss\": 0}\n";  // replaces the validation at 9, not at 5
  write_file(dir.file("log.jsonl"), log);
  std::vector<double> updates;
  for (const LogRecord& r : read_training_log(dir.file("log.jsonl"))) updates.push_back(r.update);
  CHECK(updates == std::vector<double>{1, 2, 3, 4, 5, 5, 6});
}

TEST_CASE("plot: against minutes, records without their time are left out, and a run with none is refused") {
  const std::vector<LogRecord> records = {{false, 1, std::nullopt, {{"loss", 4}}, ""}, {false, 2, 120.0, {{"loss", 3}}, ""}};
  const std::vector<Panel> panels = training_panels({{"run", records}}, {"loss"}, XAxis::kMinutes);
  REQUIRE(panels[0].series.size() == 1);
  CHECK(panels[0].series[0].x == std::vector<double>{2});
  const std::vector<LogRecord> untimed = {{false, 1, std::nullopt, {{"loss", 4}}, ""}};
  CHECK_THROWS_WITH(training_panels({{"old", untimed}}, {"loss"}, XAxis::kMinutes),
                    Contains("run 'old'") && Contains("\"elapsed\"") && Contains("--x updates"));
  CHECK(training_panels({{"old", untimed}}, {"loss"}, XAxis::kUpdates)[0].series[0].x == std::vector<double>{1});
}

TEST_CASE("plot: a run of one record shows a dot in the middle of its panel") {
  const Panel panel{"loss", "updates", false, {{"run", {50}, {4.5}, false}}};
  const Pixels p = decode(draw_line_charts({panel}, 1)->png());
  const std::vector<int> columns = p.columns_of(run_look(0).colour, 40);  // below the legend
  CHECK(columns.size() >= 20);
  const double middle = (58 + 460 - 24) / 2.0;  // between the panel's left and right edges
  for (int x : columns) CHECK(std::abs(x - middle) < 5);
}

TEST_CASE("plot: a folder where the training log should be is refused as a folder") {
  TempDir dir;
  fs::create_directories(dir.dir / "run" / "train_log.jsonl");
  CHECK(training_log_of(dir.file("run")) == (dir.dir / "run" / "train_log.jsonl").string());
  CHECK_THROWS_WITH(read_training_log(training_log_of(dir.file("run"))),
                    Contains("train_log.jsonl: is a folder, not a file"));
}
