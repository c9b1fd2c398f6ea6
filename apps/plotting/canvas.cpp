// Canvas on cairo. See canvas.hpp.
#include "apps/plotting/canvas.hpp"

#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>

#include "core/error.hpp"
#include "data/text_io.hpp"

namespace attn::plot {

Canvas::Canvas(int width, int height)
    : width_(width), height_(height), surface_(cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height)) {
  ATTN_CHECK(cairo_surface_status(surface_) == CAIRO_STATUS_SUCCESS, "plot: cannot make a {}x{} image: {}", width,
             height, cairo_status_to_string(cairo_surface_status(surface_)));
  cr_ = cairo_create(surface_);
  fill_rect(0, 0, width, height, kWhite);
}

Canvas::~Canvas() {
  cairo_destroy(cr_);
  cairo_surface_destroy(surface_);
}

void Canvas::fill_rect(double x, double y, double w, double h, Colour c) {
  cairo_set_source_rgb(cr_, c.r, c.g, c.b);
  cairo_rectangle(cr_, x, y, w, h);
  cairo_fill(cr_);
}

void Canvas::stroke_rect(double x, double y, double w, double h, Colour c, double line_width) {
  cairo_set_source_rgb(cr_, c.r, c.g, c.b);
  cairo_set_line_width(cr_, line_width);
  cairo_rectangle(cr_, x, y, w, h);
  cairo_stroke(cr_);
}

void Canvas::line(double x0, double y0, double x1, double y1, Colour c, double line_width,
                  const std::vector<double>& dashes) {
  const double xs[] = {x0, x1}, ys[] = {y0, y1};
  polyline(xs, ys, 2, c, line_width, dashes);
}

void Canvas::fill_cells(double x, double y, double cell, size_t rows, size_t columns,
                        const std::vector<Colour>& colours) {
  ATTN_CHECK(colours.size() == rows * columns, "plot: {} colours for {} × {} cells", colours.size(), rows, columns);
  cairo_surface_t* cells = cairo_image_surface_create(CAIRO_FORMAT_RGB24, int(columns), int(rows));
  ATTN_CHECK(cairo_surface_status(cells) == CAIRO_STATUS_SUCCESS, "plot: cannot make a {}x{} image: {}", columns, rows,
             cairo_status_to_string(cairo_surface_status(cells)));
  cairo_surface_flush(cells);
  unsigned char* data = cairo_image_surface_get_data(cells);
  const int stride = cairo_image_surface_get_stride(cells);
  const auto byte = [](double channel) { return uint32_t(std::lround(std::clamp(channel, 0.0, 1.0) * 255)); };
  for (size_t r = 0; r < rows; ++r) {
    auto* row = reinterpret_cast<uint32_t*>(data + r * size_t(stride));  // RGB24: 0x00RRGGBB
    for (size_t c = 0; c < columns; ++c) {
      const Colour& colour = colours[r * columns + c];
      row[c] = byte(colour.r) << 16 | byte(colour.g) << 8 | byte(colour.b);
    }
  }
  cairo_surface_mark_dirty(cells);
  cairo_save(cr_);
  cairo_translate(cr_, x, y);
  cairo_scale(cr_, cell, cell);
  cairo_set_source_surface(cr_, cells, 0, 0);
  cairo_pattern_set_filter(cairo_get_source(cr_), CAIRO_FILTER_NEAREST);
  cairo_rectangle(cr_, 0, 0, double(columns), double(rows));
  cairo_fill(cr_);
  cairo_restore(cr_);
  cairo_surface_destroy(cells);
}

void Canvas::fill_circle(double x, double y, double radius, Colour c) {
  cairo_set_source_rgb(cr_, c.r, c.g, c.b);
  cairo_new_sub_path(cr_);  // no line from the current point to the circle
  cairo_arc(cr_, x, y, radius, 0, 2 * std::numbers::pi);
  cairo_fill(cr_);
}

void Canvas::polyline(const double* x, const double* y, size_t n, Colour c, double line_width,
                      const std::vector<double>& dashes) {
  if (n == 0) return;
  cairo_save(cr_);  // the dashes are for this line only
  cairo_set_source_rgb(cr_, c.r, c.g, c.b);
  cairo_set_line_width(cr_, line_width);
  cairo_set_line_join(cr_, CAIRO_LINE_JOIN_ROUND);
  cairo_set_dash(cr_, dashes.data(), int(dashes.size()), 0);
  cairo_move_to(cr_, x[0], y[0]);
  for (size_t i = 1; i < n; ++i) cairo_line_to(cr_, x[i], y[i]);
  if (n == 1) cairo_line_to(cr_, x[0] + 0.5, y[0]);  // a lone point still shows
  cairo_stroke(cr_);
  cairo_restore(cr_);
}

namespace {

// The length of the UTF-8 character that `lead` starts (1 to 4), or 0 for a byte that starts none.
size_t character_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >> 5 == 0b110) return 2;
  if (lead >> 4 == 0b1110) return 3;
  return lead >> 3 == 0b11110 ? 4 : 0;
}

// Unicode's noncharacters (U+FDD0 to U+FDEF, and the last two of every plane), which cairo
// refuses as it refuses invalid UTF-8. `c` is one valid UTF-8 character.
bool is_noncharacter(std::string_view c) {
  char32_t code = c.size() == 1 ? char32_t(c[0]) : char32_t(c[0] & (0x7F >> c.size()));
  for (size_t i = 1; i < c.size(); ++i) code = code << 6 | char32_t(c[i] & 0x3F);
  return (code >= 0xFDD0 && code <= 0xFDEF) || (code & 0xFFFE) == 0xFFFE;
}

// Text as cairo takes it, every byte that does not belong to a character cairo draws replaced by
// U+FFFD: on any other text cairo stops drawing altogether, leaving a blank image.
std::string drawable_text(std::string_view utf8) {
  constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  std::string text;
  for (size_t i = 0; i < utf8.size();) {
    const std::string_view c = utf8.substr(i, character_length(static_cast<unsigned char>(utf8[i])));
    const bool drawable = !c.empty() && data::find_invalid_utf8(c) == std::string_view::npos && !is_noncharacter(c);
    text += drawable ? c : kReplacement;
    i += drawable ? c.size() : 1;
  }
  return text;
}

void select_font(cairo_t* cr, double size, bool bold) {
  cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
}

}  // namespace

double Canvas::text_width(std::string_view utf8, double size, bool bold) {
  select_font(cr_, size, bold);
  cairo_text_extents_t extents;
  cairo_text_extents(cr_, drawable_text(utf8).c_str(), &extents);
  return extents.x_advance;
}

void Canvas::text(double x, double y, std::string_view utf8, double size, Align align, Colour c, double degrees,
                  bool bold) {
  const double width = text_width(utf8, size, bold);
  cairo_font_extents_t font;
  cairo_font_extents(cr_, &font);
  const double dx = align == Align::kStart ? 0 : align == Align::kCentre ? -width / 2 : -width;
  cairo_save(cr_);
  cairo_translate(cr_, x, y);
  cairo_rotate(cr_, -degrees * std::numbers::pi / 180);
  cairo_move_to(cr_, dx, (font.ascent - font.descent) / 2);  // vertically centred on the anchor
  cairo_set_source_rgb(cr_, c.r, c.g, c.b);
  cairo_show_text(cr_, drawable_text(utf8).c_str());
  cairo_restore(cr_);
}

namespace {

cairo_status_t append_bytes(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

}  // namespace

std::string Canvas::png() const {
  ATTN_CHECK(cairo_status(cr_) == CAIRO_STATUS_SUCCESS, "plot: drawing the image failed ({}); nothing written",
             cairo_status_to_string(cairo_status(cr_)));
  std::string bytes;
  cairo_surface_flush(surface_);
  const cairo_status_t status = cairo_surface_write_to_png_stream(surface_, append_bytes, &bytes);
  ATTN_CHECK(status == CAIRO_STATUS_SUCCESS, "plot: PNG encoding failed: {}", cairo_status_to_string(status));
  return bytes;
}

void write_png(const Canvas& canvas, const std::string& path) { data::write_file_atomic(path, canvas.png()); }

}  // namespace attn::plot
