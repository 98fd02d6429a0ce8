// A small line-plot writer producing standalone SVG (no plotting library): axes with "nice" tick
// values, axis labels, a title and a legend, one polyline per series.
#pragma once
#include <string>
#include <vector>

namespace minrnn::eval {

struct Series {
  std::string name;
  std::vector<double> x, y;
};

struct LinePlot {
  std::string title, x_label, y_label;
  std::vector<Series> series;
  bool log_y = false;  // log10 y axis (losses); non-positive values are dropped
  int width = 640, height = 400;
};

// The SVG document text.
std::string render_svg(const LinePlot& plot);

}  // namespace minrnn::eval
