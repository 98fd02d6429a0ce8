#include "eval/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "io/atomic_file.h"

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

}  // namespace

std::string render_svg(const LinePlot& p) {
  // Data range (in plotted units: log10 for a log axis).
  auto ty = [&](double y) { return p.log_y ? std::log10(y) : y; };
  double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
  for (const auto& s : p.series) {
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!std::isfinite(s.y[i]) || (p.log_y && s.y[i] <= 0)) continue;
      x0 = std::min(x0, s.x[i]), x1 = std::max(x1, s.x[i]);
      y0 = std::min(y0, ty(s.y[i])), y1 = std::max(y1, ty(s.y[i]));
    }
  }
  if (x0 > x1) x0 = 0, x1 = 1, y0 = 0, y1 = 1;  // no data: empty axes
  if (x1 - x0 < 1e-12) x1 = x0 + 1;
  if (y1 - y0 < 1e-12) y0 -= 0.5, y1 += 0.5;
  const double pad = 0.05 * (y1 - y0);
  y0 -= pad, y1 += pad;

  const int W = p.width, H = p.height, left = 80, right = 150, top = 40, bottom = 55;
  const double pw = W - left - right, ph = H - top - bottom;
  auto sx = [&](double x) { return left + (x - x0) / (x1 - x0) * pw; };
  auto sy = [&](double y) { return top + (1 - (y - y0) / (y1 - y0)) * ph; };

  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(1);
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
    << "\" viewBox=\"0 0 " << W << " " << H << "\" font-family=\"Helvetica, Arial, sans-serif\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << W / 2 << "\" y=\"24\" text-anchor=\"middle\" font-size=\"16\">"
    << escape(p.title) << "</text>\n";
  // Grid and tick labels.
  for (double t : nice_ticks(x0, x1, 6)) {
    o << "<line x1=\"" << sx(t) << "\" y1=\"" << top << "\" x2=\"" << sx(t) << "\" y2=\""
      << top + ph << "\" stroke=\"#e5e5e5\"/>\n"
      << "<text x=\"" << sx(t) << "\" y=\"" << top + ph + 18
      << "\" text-anchor=\"middle\" font-size=\"12\">" << label(t) << "</text>\n";
  }
  for (double t : nice_ticks(y0, y1, 5)) {
    const double v = p.log_y ? std::pow(10.0, t) : t;
    o << "<line x1=\"" << left << "\" y1=\"" << sy(t) << "\" x2=\"" << left + pw << "\" y2=\""
      << sy(t) << "\" stroke=\"#e5e5e5\"/>\n"
      << "<text x=\"" << left - 6 << "\" y=\"" << sy(t) + 4
      << "\" text-anchor=\"end\" font-size=\"12\">" << label(v) << "</text>\n";
  }
  o << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << pw << "\" height=\"" << ph
    << "\" fill=\"none\" stroke=\"#333\"/>\n"
    << "<text x=\"" << left + pw / 2 << "\" y=\"" << H - 12
    << "\" text-anchor=\"middle\" font-size=\"13\">" << escape(p.x_label) << "</text>\n"
    << "<text transform=\"translate(16," << top + ph / 2
    << ") rotate(-90)\" text-anchor=\"middle\" font-size=\"13\">"
    << escape(p.y_label + (p.log_y ? " (log scale)" : "")) << "</text>\n";
  // Series and legend.
  for (size_t k = 0; k < p.series.size(); ++k) {
    const auto& s = p.series[k];
    const char* color = kColors[k % 10];
    o << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"1.8\" points=\"";
    int n = 0;
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!std::isfinite(s.y[i]) || (p.log_y && s.y[i] <= 0)) continue;
      o << (n++ ? " " : "") << sx(s.x[i]) << "," << sy(ty(s.y[i]));
    }
    o << "\"/>\n";
    if (n == 1) {  // a single point draws no line: mark it
      o << "<circle cx=\"" << sx(s.x[0]) << "\" cy=\"" << sy(ty(s.y[0])) << "\" r=\"3\" fill=\""
        << color << "\"/>\n";
    }
    const double ly = top + 10 + 20.0 * k;
    o << "<line x1=\"" << left + pw + 12 << "\" y1=\"" << ly << "\" x2=\"" << left + pw + 36
      << "\" y2=\"" << ly << "\" stroke=\"" << color << "\" stroke-width=\"3\"/>\n"
      << "<text x=\"" << left + pw + 42 << "\" y=\"" << ly + 4 << "\" font-size=\"12\">"
      << escape(s.name) << "</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

void write_svg(const std::string& path, const LinePlot& plot) {
  io::write_file_atomically(path, render_svg(plot));
}

}  // namespace minrnn::eval
