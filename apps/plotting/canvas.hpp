// A drawing surface for the project's figures (heat maps, training curves): a thin owner of a
// cairo image surface (cairo: Debian's libcairo2, which rasterises with anti-aliasing, lays
// out text with FreeType fonts and encodes PNG through libpng). Coordinates are pixels from
// the top-left corner; colours are RGB in [0, 1].
#pragma once
#include <string>
#include <string_view>
#include <vector>

typedef struct _cairo cairo_t;
typedef struct _cairo_surface cairo_surface_t;

namespace attn::plot {

struct Colour {
  double r = 0, g = 0, b = 0;
};

inline constexpr Colour kBlack{0, 0, 0}, kWhite{1, 1, 1}, kGrey{0.55, 0.55, 0.55}, kLightGrey{0.9, 0.9, 0.9};

// Where a text's anchor point sits on the text: its start, centre or end (horizontally),
// vertically centred on the anchor.
enum class Align { kStart, kCentre, kEnd };

class Canvas {
 public:
  Canvas(int width, int height);  // white
  ~Canvas();
  Canvas(const Canvas&) = delete;
  Canvas& operator=(const Canvas&) = delete;

  int width() const { return width_; }
  int height() const { return height_; }

  void fill_rect(double x, double y, double w, double h, Colour c);
  void stroke_rect(double x, double y, double w, double h, Colour c, double line_width = 1);
  void line(double x0, double y0, double x1, double y1, Colour c, double line_width = 1,
            const std::vector<double>& dashes = {});
  void fill_circle(double x, double y, double radius, Colour c);
  // A grid of rows × columns square cells of `cell` px from (x, y), cell (r, c) in
  // colours[r * columns + c]: one image of a pixel per cell, scaled up without smoothing, so the
  // cells meet without seams and a map of a thousand tokens is one draw, not a million.
  void fill_cells(double x, double y, double cell, size_t rows, size_t columns, const std::vector<Colour>& colours);
  // A polyline through the points (x[i], y[i]); `dashes` alternates the lengths (px) drawn and
  // left out, none for a solid line.
  void polyline(const double* x, const double* y, size_t n, Colour c, double line_width = 1.5,
                const std::vector<double>& dashes = {});
  // UTF-8 text in DejaVu Sans at `size` px, rotated by `degrees` (counter-clockwise) about the
  // anchor. Bytes that are not UTF-8 (a folder name in another encoding), and Unicode's
  // noncharacters, show as U+FFFD.
  void text(double x, double y, std::string_view utf8, double size, Align align = Align::kStart, Colour c = kBlack,
            double degrees = 0, bool bold = false);
  double text_width(std::string_view utf8, double size, bool bold = false);

  // The image as a PNG file's bytes. Throws attn::Error when a drawing failed (cairo then
  // ignores every later one, so the image would be incomplete).
  std::string png() const;

 private:
  int width_, height_;
  cairo_surface_t* surface_;
  cairo_t* cr_;
};

// Writes a canvas as PNG to path atomically (temp file + rename).
void write_png(const Canvas& canvas, const std::string& path);

}  // namespace attn::plot
