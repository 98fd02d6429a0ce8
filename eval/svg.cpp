#include "eval/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace minrnn::eval {
namespace {

// Tableau-10: distinguishable colours for up to ten seeds.
const char* kColors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                         "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

// Tick values 1/2/5 × 10^k covering [lo, hi] with about `n` ticks.
std::vector<double> nice_ticks(double lo, double hi, int n) {
  const double raw = (hi - lo) / std::max(1, n);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  std::vector<double> ticks;
  for (double t = std::ceil(lo / step) * step; t <= hi + 1e-9 * step; t += step)
    ticks.push_back(std::abs(t) < 1e-12 * step ? 0.0 : t);
  return ticks;
}

std::string label(double v) {
  char buf[32];
  const double a = std::abs(v);
  if (a >= 1e4 && std::fmod(a, 1000) == 0)
    std::snprintf(buf, sizeof buf, "%gk", v / 1000);
  else
    std::snprintf(buf, sizeof buf, "%.3g", v);  // log-axis ticks are not round numbers
  return buf;
}

// Whether series point i is drawn: finite, and positive on a log axis.
bool drawn(const LinePlot& p, const Series& s, size_t i) {
  return std::isfinite(s.y[i]) && !(p.log_y && s.y[i] <= 0);
}

// The plot's area on the page and the data range it shows (y in plotted units: log10 on a log
// axis), padded; sx / sy map data to page coordinates.
struct Frame {
  double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
  double left = 80, top = 40, width = 0, height = 0;
  bool log_y = false;
  double ty(double y) const { return log_y ? std::log10(y) : y; }
  double sx(double x) const { return left + (x - x0) / (x1 - x0) * width; }
  double sy(double y) const { return top + (1 - (y - y0) / (y1 - y0)) * height; }
};

Frame frame_of(const LinePlot& p) {
  Frame f;
  f.log_y = p.log_y;
  constexpr double kRight = 150, kBottom = 55;
  f.width = p.width - f.left - kRight;
  f.height = p.height - f.top - kBottom;
  for (const auto& s : p.series) {
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!drawn(p, s, i)) continue;
      f.x0 = std::min(f.x0, s.x[i]), f.x1 = std::max(f.x1, s.x[i]);
      f.y0 = std::min(f.y0, f.ty(s.y[i])), f.y1 = std::max(f.y1, f.ty(s.y[i]));
    }
  }
  if (f.x0 > f.x1) f.x0 = 0, f.x1 = 1, f.y0 = 0, f.y1 = 1;  // no data: empty axes
  if (f.x1 - f.x0 < 1e-12) {
    // One step (a run evaluated only at its end): from 0 with it in the middle, whole-step
    // ticks, not 60–61 in fifths.
    f.x1 = f.x0 > 0 ? 2 * f.x0 : f.x0 + 1;
    f.x0 = f.x0 > 0 ? 0 : f.x0;
  }
  if (f.y1 - f.y0 < 1e-12) f.y0 -= 0.5, f.y1 += 0.5;
  const double pad = 0.05 * (f.y1 - f.y0);
  f.y0 -= pad, f.y1 += pad;
  return f;
}

// The grid, its tick labels, the frame and the axes' labels.
void write_axes(std::ostringstream& o, const LinePlot& p, const Frame& f) {
  for (double t : nice_ticks(f.x0, f.x1, 6)) {
    o << "<line x1=\"" << f.sx(t) << "\" y1=\"" << f.top << "\" x2=\"" << f.sx(t) << "\" y2=\""
      << f.top + f.height << "\" stroke=\"#e5e5e5\"/>\n"
      << "<text x=\"" << f.sx(t) << "\" y=\"" << f.top + f.height + 18
      << "\" text-anchor=\"middle\" font-size=\"12\">" << label(t) << "</text>\n";
  }
  for (double t : nice_ticks(f.y0, f.y1, 5)) {
    const double v = p.log_y ? std::pow(10.0, t) : t;
    o << "<line x1=\"" << f.left << "\" y1=\"" << f.sy(t) << "\" x2=\"" << f.left + f.width
      << "\" y2=\"" << f.sy(t) << "\" stroke=\"#e5e5e5\"/>\n"
      << "<text x=\"" << f.left - 6 << "\" y=\"" << f.sy(t) + 4
      << "\" text-anchor=\"end\" font-size=\"12\">" << label(v) << "</text>\n";
  }
  o << "<rect x=\"" << f.left << "\" y=\"" << f.top << "\" width=\"" << f.width << "\" height=\""
    << f.height << "\" fill=\"none\" stroke=\"#333\"/>\n"
    << "<text x=\"" << f.left + f.width / 2 << "\" y=\"" << p.height - 12
    << "\" text-anchor=\"middle\" font-size=\"13\">" << escape(p.x_label) << "</text>\n"
    << "<text transform=\"translate(16," << f.top + f.height / 2
    << ") rotate(-90)\" text-anchor=\"middle\" font-size=\"13\">"
    << escape(p.y_label + (p.log_y ? " (log scale)" : "")) << "</text>\n";
}

// Series k's line (a dot where it has one point to draw) and its legend entry.
void write_series(std::ostringstream& o, const LinePlot& p, const Frame& f, size_t k) {
  const Series& s = p.series[k];
  const char* color = kColors[k % 10];
  o << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"1.8\" points=\"";
  int n = 0;
  size_t last = 0;
  for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
    if (!drawn(p, s, i)) continue;
    o << (n++ ? " " : "") << f.sx(s.x[i]) << "," << f.sy(f.ty(s.y[i]));
    last = i;
  }
  o << "\"/>\n";
  if (n == 1) {  // a single point draws no line: mark it
    o << "<circle cx=\"" << f.sx(s.x[last]) << "\" cy=\"" << f.sy(f.ty(s.y[last]))
      << "\" r=\"3\" fill=\"" << color << "\"/>\n";
  }
  const double ly = f.top + 10 + 20.0 * k, lx = f.left + f.width;
  o << "<line x1=\"" << lx + 12 << "\" y1=\"" << ly << "\" x2=\"" << lx + 36 << "\" y2=\"" << ly
    << "\" stroke=\"" << color << "\" stroke-width=\"3\"/>\n"
    << "<text x=\"" << lx + 42 << "\" y=\"" << ly + 4 << "\" font-size=\"12\">" << escape(s.name)
    << "</text>\n";
}

}  // namespace

std::string render_svg(const LinePlot& p) {
  const Frame f = frame_of(p);
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(1);
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << p.width << "\" height=\"" << p.height
    << "\" viewBox=\"0 0 " << p.width << " " << p.height
    << "\" font-family=\"Helvetica, Arial, sans-serif\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << p.width / 2 << "\" y=\"24\" text-anchor=\"middle\" font-size=\"16\">"
    << escape(p.title) << "</text>\n";
  write_axes(o, p, f);
  for (size_t k = 0; k < p.series.size(); ++k) write_series(o, p, f, k);
  o << "</svg>\n";
  return o.str();
}

}  // namespace minrnn::eval
