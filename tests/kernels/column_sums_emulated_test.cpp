// The column-sum kernel (kernels/cuda/pointwise_programs.h, ColumnSums: a Linear's bias gradient,
// and with `gelu` the MLP's GELU backward) run by the host emulator, pass after pass as
// kernels/cuda/pointwise.cu chains them until one row is left: every output element written once,
// no partial row or column outside the array touched, the sums against float64, the products
// one rounding each.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cuda/pointwise_programs.h"
#include "tests/kernels/grid_emulator.h"
#include "tests/tensor_compare.h"

namespace minrnn::core {
namespace {

namespace emu = minrnn::testing::emu;
using minrnn::testing::values_of;

template <typename T, bool Gelu = false>
using Sums = grid::ColumnSums<T, emu::Memory, Gelu>;

// One pass (Gelu: with the GELU products) over n rows of `in` into a new level buffer; returns
// whether it was the last (one partial row a run) and, in *tiles, the rows it left.
template <typename T, bool Gelu>
bool sum_pass(int64_t n, int64_t width, int64_t runs, emu::In<T> in, emu::Buffer<T>& pre,
              emu::Buffer<T>& bias, emu::Buffer<T>& product, emu::Buffer<T>& level, emu::Log& log,
              int64_t* tiles) {
  Sums<T, Gelu> k{};
  k.rows = n, k.width = width, k.runs = runs;
  k.in = in, k.pre = pre.in(), k.bias = bias.in(), k.product = product.out();
  k.sums_out = level.out();
  emu::run(k, log);
  level.check_written(log);
  *tiles = k.tiles();
  return k.run_tiles() <= 1;
}

template <typename T>
torch::Tensor rows_of(const std::vector<T>& v, int64_t rows, int64_t width) {
  const auto dtype = sizeof(T) == 4 ? torch::kFloat : torch::kDouble;
  return torch::from_blob(const_cast<T*>(v.data()), {rows, width}, dtype).clone();
}

// Runs the passes over in (rows, width) — of in · GELU′(pre + bias) when scaled, bias a run's row;
// `runs` runs' rows one after the other, each summed on its own — and checks them; returns how
// many passes ran.
template <typename T>
int check_sums(int64_t rows, int64_t width, bool scaled, int64_t runs = 1) {
  SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(width) + (scaled ? " scaled" : "") +
               ", " + std::to_string(runs) + " runs");
  const auto dtype = sizeof(T) == 4 ? torch::kFloat : torch::kDouble;
  const torch::Tensor in = torch::randn({rows, width}, dtype),
                      pre = torch::randn({rows, width}, dtype) * 2,
                      bias = torch::randn({runs, width}, dtype);
  // Each term's factor, as the pass computes it: GELU′ of the element plus its run's bias.
  const std::vector<T> pre_v = values_of<T>(pre), bias_v = values_of<T>(bias);
  std::vector<T> slopes(pre_v.size());
  for (size_t i = 0; i < pre_v.size(); ++i) {
    const int64_t row = static_cast<int64_t>(i) / width, k = static_cast<int64_t>(i) % width;
    slopes[i] = grid::gelu_at(pre_v[i] + bias_v[row / (rows / runs) * width + k]).slope;
  }
  const torch::Tensor scale = rows_of(slopes, rows, width);
  emu::Log log;
  emu::Buffer<T> in_b("in", values_of<T>(in)), pre_b("pre", pre_v), bias_b("bias", bias_v),
      product_b("product", static_cast<size_t>(scaled ? rows * width : 0));
  std::vector<std::unique_ptr<emu::Buffer<T>>> levels;  // each pass's output, the last the sums
  emu::In<T> pass_in = in_b.in();
  int passes = 0;
  for (int64_t n = rows;; ++passes) {
    const int64_t level_rows = runs * Sums<T>::tiles_of(n / runs);
    levels.push_back(std::make_unique<emu::Buffer<T>>("level " + std::to_string(passes),
                                                      static_cast<size_t>(level_rows * width)));
    int64_t tiles = 0;
    const bool last = scaled && passes == 0
                          ? sum_pass<T, true>(n, width, runs, pass_in, pre_b, bias_b, product_b,
                                              *levels.back(), log, &tiles)
                          : sum_pass<T, false>(n, width, runs, pass_in, pre_b, bias_b, product_b,
                                               *levels.back(), log, &tiles);
    if (last) break;
    pass_in = levels.back()->in(), n = tiles;
  }
  if (scaled) product_b.check_written(log);
  EXPECT_TRUE(log.ok()) << log.summary();
  const torch::Tensor terms = scaled ? in * scale : in;
  if (scaled) {
    EXPECT_TRUE(torch::equal(rows_of(product_b.data(), rows, width), terms));
  }
  const torch::Tensor want = terms.to(torch::kDouble).view({runs, -1, width}).sum(1);
  const torch::Tensor got = rows_of(levels.back()->data(), runs, width).to(torch::kDouble);
  // Each sum's rounding error grows at most as its terms' count (in practice as its square root).
  const double eps = sizeof(T) == 4 ? 6e-8 : 1.2e-16;
  const double tol = 4 * eps * static_cast<double>(rows) + 1e-300;
  EXPECT_LE((got - want).abs().max().item<double>(),
            tol * terms.abs().to(torch::kDouble).sum(0).max().item<double>());
  if (runs > 1) {  // each run's sums, bit for bit, as that run's rows summed alone
    for (int64_t r = 0; r < runs; ++r) {
      const torch::Tensor alone = terms.view({runs, -1, width})[r];
      emu::Log alone_log;
      emu::Buffer<T> run_in("run in", values_of<T>(alone));
      std::vector<std::unique_ptr<emu::Buffer<T>>> run_levels;
      emu::In<T> run_pass = run_in.in();
      for (int64_t n = rows / runs;;) {
        Sums<T> k{};
        k.rows = n, k.width = width, k.in = run_pass;
        run_levels.push_back(
            std::make_unique<emu::Buffer<T>>("run level", static_cast<size_t>(k.tiles() * width)));
        k.sums_out = run_levels.back()->out();
        emu::run(k, alone_log);
        if (k.tiles() <= 1) break;
        run_pass = run_levels.back()->in(), n = k.tiles();
      }
      EXPECT_TRUE(torch::equal(rows_of(run_levels.back()->data(), 1, width)[0],
                               rows_of(levels.back()->data(), runs, width)[r]))
          << "run " << r;
    }
  }
  return passes + 1;
}

TEST(ColumnSumsEmulated, SumsEveryColumnOverPartialTilesAndColumnBlocks) {
  torch::manual_seed(11);
  constexpr int64_t kTile = Sums<float>::kTileRows;
  for (auto [rows, width] : {std::pair<int64_t, int64_t>{1, 3},
                             {7, 48},
                             {kTile, 32},
                             {kTile + 1, 33},
                             {1000, 128},
                             {3840, 96}}) {
    for (bool scaled : {false, true}) {
      EXPECT_EQ(check_sums<float>(rows, width, scaled), rows > kTile ? 2 : 1);
      check_sums<double>(rows, width, scaled);
    }
  }
}

// A pack's runs stacked (ops/run_axis.h): each run's rows summed on their own, as that run alone,
// where a run's rows end inside a tile, on a tile's edge, and fit one tile.
TEST(ColumnSumsEmulated, EachRunOfAPackIsSummedAsItIsAlone) {
  torch::manual_seed(13);
  constexpr int64_t kTile = Sums<float>::kTileRows;
  for (bool scaled : {false, true}) {
    EXPECT_EQ(check_sums<float>(3 * 1000, 40, scaled, 3), 2);
    EXPECT_EQ(check_sums<float>(2 * 2 * kTile, 33, scaled, 2), 2);
    EXPECT_EQ(check_sums<float>(4 * 7, 5, scaled, 4), 1);
    check_sums<double>(2 * 300, 17, scaled, 2);
  }
}

// Past kTileRows² rows the partial rows need a pass of their own.
TEST(ColumnSumsEmulated, ChainsAThirdPassPastATileOfTiles) {
  torch::manual_seed(12);
  constexpr int64_t kTile = Sums<float>::kTileRows;
  EXPECT_EQ(check_sums<float>(kTile * kTile + 5, 2, true), 3);
}

}  // namespace
}  // namespace minrnn::core
