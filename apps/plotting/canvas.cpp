// Canvas on cairo. See canvas.hpp.
#include "apps/plotting/canvas.hpp"

#include <cairo.h>

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

void Canvas::line(double x0, double y0, double x1, double y1, Colour c, double line_width) {
  const double xs[] = {x0, x1}, ys[] = {y0, y1};
  polyline(xs, ys, 2, c, line_width);
}

void Canvas::polyline(const double* x, const double* y, size_t n, Colour c, double line_width) {
  if (n == 0) return;
  cairo_set_source_rgb(cr_, c.r, c.g, c.b);
  cairo_set_line_width(cr_, line_width);
  cairo_set_line_join(cr_, CAIRO_LINE_JOIN_ROUND);
  cairo_move_to(cr_, x[0], y[0]);
  for (size_t i = 1; i < n; ++i) cairo_line_to(cr_, x[i], y[i]);
  if (n == 1) cairo_line_to(cr_, x[0] + 0.5, y[0]);  // a lone point still shows
  cairo_stroke(cr_);
}

namespace {

void select_font(cairo_t* cr, double size, bool bold) {
  cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
}

}  // namespace

double Canvas::text_width(std::string_view utf8, double size, bool bold) {
  select_font(cr_, size, bold);
  const std::string s(utf8);
  cairo_text_extents_t extents;
  cairo_text_extents(cr_, s.c_str(), &extents);
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
  const std::string s(utf8);
  cairo_show_text(cr_, s.c_str());
  cairo_restore(cr_);
}

namespace {

cairo_status_t append_bytes(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

}  // namespace

std::string Canvas::png() const {
  std::string bytes;
  cairo_surface_flush(surface_);
  const cairo_status_t status = cairo_surface_write_to_png_stream(surface_, append_bytes, &bytes);
  ATTN_CHECK(status == CAIRO_STATUS_SUCCESS, "plot: PNG encoding failed: {}", cairo_status_to_string(status));
  return bytes;
}

void write_png(const Canvas& canvas, const std::string& path) { data::write_file_atomic(path, canvas.png()); }

}  // namespace attn::plot
