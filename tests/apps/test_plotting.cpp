// Figures (apps/plotting): axis ticks at 1-2-5 steps, a constant series' axis around its value,
// training logs read in update order with a resumed run's repeated updates replaced and
// validations placed at their update's time, heat-map pixels in the scale's colours, PNG bytes
// that decode to the promised size.
#include <catch.hpp>

#include <cairo.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "apps/plotting/colour_scale.hpp"
#include "apps/plotting/heat_map.hpp"
#include "apps/plotting/line_chart.hpp"
#include "apps/plotting/training_log.hpp"
#include "test_support.hpp"

using namespace attn;
using namespace attn::plot;
using namespace attn::test;
using Catch::Matchers::Contains;

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
  bool has(Colour c) const {  // within rounding
    for (uint32_t p : rgb)
      if (std::abs(int(p >> 16 & 255) - int(c.r * 255)) <= 2 && std::abs(int(p >> 8 & 255) - int(c.g * 255)) <= 2 &&
          std::abs(int(p & 255) - int(c.b * 255)) <= 2)
        return true;
    return false;
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
    if (r.valid) times.push_back(r.elapsed);
  CHECK(times == std::vector<double>{90, 120, 200, 170});
  write_file(dir.file("untimed.jsonl"), "{\"type\": \"valid\", \"update\": 1, \"loss\": 4}\n");
  CHECK(read_training_log(dir.file("untimed.jsonl")).front().elapsed == 0);  // nothing to time it by
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
