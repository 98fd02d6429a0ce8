// The SVG writer of the report's curves (eval/svg.h): well-formed, one line a series, the axes.
#include "eval/svg.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace minrnn {
namespace {

// Well-formed: every element opened is closed, in order (a tiny XML tag matcher).
bool well_formed(const std::string& xml) {
  std::vector<std::string> stack;
  for (size_t i = xml.find('<'); i != std::string::npos; i = xml.find('<', i + 1)) {
    const size_t end = xml.find('>', i);
    if (end == std::string::npos) return false;
    const std::string tag = xml.substr(i + 1, end - i - 1);
    const std::string name =
        tag.substr(tag[0] == '/', tag.find_first_of(" />", 1) - (tag[0] == '/'));
    if (tag[0] == '/') {
      if (stack.empty() || stack.back() != name) return false;
      stack.pop_back();
    } else if (tag.back() != '/') {
      stack.push_back(name);
    }
  }
  return stack.empty();
}

TEST(Svg, WellFormedWithTitleLegendAndOneLinePerSeries) {
  eval::LinePlot p{"loss <&> title", "step", "loss", {}, true};
  p.series.push_back({"seed 0", {0, 1, 2}, {1, 0.5, 0.25}});
  p.series.push_back({"seed 1", {0, 1, 2}, {2, 1, 0}});  // 0 dropped on the log axis
  const std::string svg = eval::render_svg(p);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_TRUE(well_formed(svg)) << svg;
  EXPECT_NE(svg.find("loss &lt;&amp;&gt; title"), std::string::npos);
  EXPECT_NE(svg.find(">seed 1</text>"), std::string::npos);
  size_t lines = 0;
  for (size_t i = svg.find("<polyline"); i != std::string::npos; i = svg.find("<polyline", i + 1))
    ++lines;
  EXPECT_EQ(lines, 2u);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
  EXPECT_TRUE(well_formed(eval::render_svg(eval::LinePlot{})));  // empty plot: axes only
}

// A series with one point left to draw marks that point, wherever it stands in the series.
TEST(Svg, ALoneDrawnPointIsMarkedWhereItIs) {
  eval::LinePlot p{"t", "step", "loss", {}, true};
  p.series.push_back({"seed 0", {0, 1, 2}, {1, 2, 4}});
  p.series.push_back({"seed 1", {0, 1, 2}, {0, -1, 2}});  // only step 2 on the log axis
  const std::string svg = eval::render_svg(p);
  const size_t circle = svg.find("<circle");
  ASSERT_NE(circle, std::string::npos) << svg;
  EXPECT_EQ(svg.find("<circle", circle + 1), std::string::npos) << svg;
  // Seed 1's one point stands at step 2, where seed 0's last point does: the same page x.
  const size_t points = svg.find("points=\"");
  const std::string seed0 = svg.substr(points + 8, svg.find('"', points + 8) - points - 8);
  const std::string last = seed0.substr(seed0.rfind(' ') + 1);
  EXPECT_NE(svg.find("<circle cx=\"" + last.substr(0, last.find(',')) + "\" cy=\""),
            std::string::npos)
      << svg;
}

// Runs evaluated only at their end (eval_every 0) share one step: the x axis runs from 0 with it
// in the middle, in whole steps (a walk, 2026-11-30: 60 to 61 in ticks of 0.2).
TEST(Svg, PointsOfOneStepStandMidAxisFromZero) {
  eval::LinePlot p{"t", "step", "score", {}, false};
  p.series.push_back({"seed 0", {60}, {3.0}});
  p.series.push_back({"seed 1", {60}, {2.9}});
  const std::string svg = eval::render_svg(p);
  EXPECT_NE(svg.find(">0</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">120</text>"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("60.2"), std::string::npos) << svg;
}

}  // namespace
}  // namespace minrnn
