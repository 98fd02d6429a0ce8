// The tuned stacked products (ops/tuned_gemm_cuda.h): on the CPU, that the column-major
// description of a row-major product (ops/gemm_layout.h) computes torch's bmm when a loop reads
// it as cuBLAS does (and sums a's rows where its bias-gradient epilogue reduces the second
// operand); on
// CUDA (label `cuda`; skipped without a GPU), the products themselves against LibTorch's for every
// operand layout the ops hand them, and a weight gradient's bias gradient against dy's column sums.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdio>
#include <functional>
#include <sstream>
#include <string>

#include "ops/affine.h"
#include "ops/gemm_layout.h"
#include "ops/tuned_choice_file.h"
#include "tests/scoped_env.h"
#include "tests/temp_dir.h"
#include "tests/text_file.h"
#if defined(MINRNN_WITH_CUDA)
#include "ops/tuned_gemm_cuda.h"
#endif

namespace minrnn::core {
namespace {

// Element (i, j) of op(stored) as cuBLAS reads a column-major operand of batch b.
double element(const double* data, const ColumnMajorOperand& o, int64_t batch, int64_t i,
               int64_t j) {
  const int64_t row = o.transposed ? j : i, col = o.transposed ? i : j;
  EXPECT_LT(row, o.rows);
  EXPECT_LT(col, o.cols);
  return data[batch * o.batch_stride + row + col * o.ld];
}

// D = op(first) · op(second), column-major, as cuBLAS computes it from the description.
torch::Tensor replay(const ColumnMajorProduct& p, const torch::Tensor& a, const torch::Tensor& b) {
  torch::Tensor out = torch::full({p.batch, p.n, p.m}, std::nan(""), torch::kDouble);
  double* d = out.data_ptr<double>();
  for (int64_t r = 0; r < p.batch; ++r) {
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t j = 0; j < p.n; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < p.k; ++l) {
          sum += element(b.data_ptr<double>(), p.first, r, i, l) *
                 element(a.data_ptr<double>(), p.second, r, l, j);
        }
        d[r * p.out.batch_stride + i + j * p.out.ld] = sum;
      }
    }
  }
  return out;
}

// cuBLASLt's BGRADB as the description reads it: for each of D's columns, op(second)'s column
// summed over k — (batch, n) as cuBLAS lays the bias gradient out, each batch p.n apart.
torch::Tensor replay_second_sums(const ColumnMajorProduct& p, const torch::Tensor& a) {
  torch::Tensor sums = torch::full({p.batch, p.n}, std::nan(""), torch::kDouble);
  for (int64_t r = 0; r < p.batch; ++r) {
    for (int64_t j = 0; j < p.n; ++j) {
      double sum = 0;
      for (int64_t l = 0; l < p.k; ++l) sum += element(a.data_ptr<double>(), p.second, r, l, j);
      sums[r][j] = sum;
    }
  }
  return sums;
}

// An operand (P, rows, cols) laid out by rows, or as the transpose of a row-major (P, cols, rows).
torch::Tensor operand(int64_t runs, int64_t rows, int64_t cols, bool by_columns) {
  return by_columns ? torch::randn({runs, cols, rows}, torch::kDouble).transpose(1, 2)
                    : torch::randn({runs, rows, cols}, torch::kDouble);
}

TEST(TunedGemmLayout, ItsColumnMajorProductIsTorchsRowMajorOne) {
  torch::manual_seed(0);
  struct Case {
    int64_t runs, m, n, k;
  };
  for (const Case c : {Case{3, 5, 7, 4}, Case{2, 1, 6, 3}, Case{2, 4, 1, 5}, Case{1, 3, 4, 1}}) {
    for (const bool a_by_columns : {false, true}) {
      for (const bool b_by_columns : {false, true}) {
        const torch::Tensor a = operand(c.runs, c.m, c.k, a_by_columns);
        const torch::Tensor b = operand(c.runs, c.k, c.n, b_by_columns);
        const int64_t sa[3] = {a.stride(0), a.stride(1), a.stride(2)};
        const int64_t sb[3] = {b.stride(0), b.stride(1), b.stride(2)};
        const auto p = column_major_product(c.runs, c.m, c.n, c.k, sa, sb);
        ASSERT_TRUE(p.has_value());
        // cuBLAS's op T where an operand's rows are not contiguous (both branches are taken).
        EXPECT_EQ(p->first.transposed, b.stride(2) != 1 && c.n > 1);
        EXPECT_EQ(p->second.transposed, a.stride(2) != 1 && c.k > 1);
        // D is Cᵀ by columns, i.e. C by rows: the same memory as torch's contiguous product.
        const torch::Tensor d = replay(*p, a, b);
        EXPECT_TRUE(torch::allclose(d.view({c.runs, c.m, c.n}), torch::bmm(a, b), 1e-12, 1e-12))
            << c.runs << "×" << c.m << "×" << c.n << "×" << c.k << " a by columns " << a_by_columns
            << ", b by columns " << b_by_columns;
        // The bias-gradient epilogue that reduces the second operand over k (BGRADB, what
        // tuned_bmm_and_sums asks for) sums a's rows: with a = dyᵀ, dy's column sums.
        EXPECT_TRUE(torch::allclose(replay_second_sums(*p, a), a.sum(2), 1e-12, 1e-12))
            << c.runs << "×" << c.m << "×" << c.n << "×" << c.k << " a by columns " << a_by_columns;
      }
    }
  }
}

TEST(TunedGemmLayout, AnOperandOfNeitherLayoutIsLeftToACopy) {
  const torch::Tensor strided = torch::randn({2, 6, 8}).slice(1, 0, 6, 2).slice(2, 0, 8, 2);
  EXPECT_FALSE(as_column_major_transpose(strided.size(1), strided.size(2), strided.stride(1),
                                         strided.stride(2), strided.stride(0))
                   .has_value());
}

// A switch of the stacked products (`variable`): on where unset, off at `off`, and another value
// refused naming the variable and the value.
void expect_switch(const char* variable, const char* off, const std::function<bool()>& is_on) {
  {
    const testing::ScopedEnv unset(variable, "");
    EXPECT_TRUE(is_on()) << variable << " unset";
  }
  {
    const testing::ScopedEnv set_off(variable, off);
    EXPECT_FALSE(is_on()) << variable << "=" << off;
  }
  const testing::ScopedEnv wrong(variable, "fast");
  try {
    is_on();
    ADD_FAILURE() << variable << "=fast was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(std::string(variable) + "=fast"), std::string::npos)
        << e.what();
  }
}

TEST(TunedGemm, TheSwitchesTakeTwoNames) {
  expect_switch("MINRNN_STACKED_GEMM", "cublas", stacked_products_tuned);
  expect_switch("MINRNN_STACKED_BIAS_GRAD", "apart", stacked_bias_grads_in_products);
  expect_switch("MINRNN_STACKED_GEMM_SEARCH", "heuristic", tuned_products_search_wide);
}

#if defined(MINRNN_WITH_CUDA)
// Every layout the stacked ops hand the product (rows, transposed weights, transposed output
// gradients), a bias or none, sizes not multiples of a tile: each of cuBLASLt's candidates (any
// one may be chosen) and the tuned product within float32 rounding of LibTorch's, and a shape's
// second call (its kept choice) the same bits as its first (the choice timed there).
TEST(TunedGemmCuda, ProductsAreLibTorchsForEveryLayout) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA GPU visible";
  torch::manual_seed(1);
  const auto on_gpu = torch::TensorOptions().device(torch::kCUDA).dtype(torch::kFloat);
  struct Case {
    int64_t runs, m, n, k;
  };
  for (const Case c : {Case{4, 3776, 256, 128}, Case{3, 37, 5, 19}, Case{2, 1280, 128, 512}}) {
    for (const bool a_by_columns : {false, true}) {
      for (const bool b_by_columns : {false, true}) {
        for (const bool with_bias : {false, true}) {
          const torch::Tensor a = operand(c.runs, c.m, c.k, a_by_columns).to(on_gpu);
          const torch::Tensor b = operand(c.runs, c.k, c.n, b_by_columns).to(on_gpu);
          const torch::Tensor bias =
              with_bias ? torch::randn({c.runs, c.n}, on_gpu) : torch::Tensor();
          torch::Tensor expected = torch::bmm(a, b);
          if (with_bias) expected += bias.unsqueeze(1);
          const auto what = [&](const std::string& which, const torch::Tensor& got) {
            std::ostringstream s;
            s << which << ", " << c.runs << "×" << c.m << "×" << c.n << "×" << c.k
              << " a by columns " << a_by_columns << ", b by columns " << b_by_columns << ", bias "
              << with_bias << ": largest difference " << (got - expected).abs().max().item<float>();
            return s.str();
          };
          int index = 0;
          const int offered =
              each_cublaslt_candidate(a, b, bias, false, [&](const torch::Tensor& got, auto&) {
                EXPECT_TRUE(torch::allclose(got, expected, 1e-4, 1e-4))
                    << what("candidate " + std::to_string(index++), got);
              });
          EXPECT_GT(offered, 0) << what("cuBLASLt offered nothing", expected);
          const torch::Tensor first = tuned_bmm(a, b, bias), again = tuned_bmm(a, b, bias);
          EXPECT_TRUE(torch::allclose(first, expected, 1e-4, 1e-4)) << what("tuned", first);
          EXPECT_TRUE(torch::equal(first, again));
        }
      }
    }
  }
  // Misaligned: an operand one float into its allocation, a bias likewise. cuBLASLt's check of a
  // configuration sees no addresses: every candidate must still be one that reads them so (a
  // misaligned read would end the process, not fail an expectation).
  const torch::Tensor a = torch::randn({2 * 64 * 32 + 1}, on_gpu).narrow(0, 1, 2 * 64 * 32);
  const torch::Tensor a3 = a.view({2, 64, 32}), b = torch::randn({2, 32, 48}, on_gpu);
  const torch::Tensor bias = torch::randn({2 * 48 + 1}, on_gpu).narrow(0, 1, 2 * 48).view({2, 48});
  for (const torch::Tensor& with : {torch::Tensor(), bias}) {
    torch::Tensor expected = torch::bmm(a3, b);
    if (with.defined()) expected += with.unsqueeze(1);
    const int ran =
        each_cublaslt_candidate(a3, b, with, false, [&](const torch::Tensor& got, auto&) {
          EXPECT_TRUE(torch::allclose(got, expected, 1e-4, 1e-4))
              << "misaligned, bias " << with.defined();
        });
    std::printf("misaligned operands, bias %d: cuBLASLt offered %d candidates\n", with.defined(),
                ran);
    EXPECT_TRUE(torch::allclose(tuned_bmm(a3, b, with), expected, 1e-4, 1e-4));
  }
  EXPECT_FALSE(tuned_gemm_choices().empty());
}

// A stacked weight's gradient with its bias's (tuned_bmm_and_sums, a = dyᵀ): each of cuBLASLt's
// bias-gradient candidates (it may offer none for float32: the product and the column sums
// apart then) and the tuned call within float32 rounding of bmm and dy's column sums; a shape's
// second call the same bits as its first. dy by rows (the stacked ops' layout) and by columns
// (rows_for_products' for widths not a multiple of 4).
TEST(TunedGemmCuda, AWeightGradientsBiasGradientIsItsOutputGradientsColumnSums) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA GPU visible";
  torch::manual_seed(2);
  const auto on_gpu = torch::TensorOptions().device(torch::kCUDA).dtype(torch::kFloat);
  struct Case {
    int64_t runs, rows, out, in;
  };
  for (const Case c :
       {Case{4, 3776, 256, 128}, Case{3, 37, 6, 19}, Case{2, 1280, 128, 512}, Case{1, 64, 8, 16}}) {
    for (const bool dy_by_columns : {false, true}) {
      const torch::Tensor dy = operand(c.runs, c.rows, c.out, dy_by_columns).to(on_gpu);
      const torch::Tensor rows = torch::randn({c.runs, c.rows, c.in}, on_gpu);
      const torch::Tensor a = dy.transpose(1, 2);
      const torch::Tensor expected = torch::bmm(a, rows), expected_sums = dy.sum(1);
      const auto what = [&](const std::string& which) {
        std::ostringstream s;
        s << which << ", " << c.runs << " runs of " << c.rows << " rows, " << c.out << " × " << c.in
          << ", dy by columns " << dy_by_columns;
        return s.str();
      };
      const int offered = each_cublaslt_candidate(
          a, rows, {}, true, [&](const torch::Tensor& got, const torch::Tensor& sums) {
            EXPECT_TRUE(torch::allclose(got, expected, 1e-4, 1e-4)) << what("candidate's product");
            EXPECT_TRUE(torch::allclose(sums, expected_sums, 1e-4, 1e-4))
                << what("candidate's sums");
          });
      std::printf("%s: cuBLASLt offered %d candidates with the bias gradient\n",
                  what("weight gradient").c_str(), offered);
      const auto [first, first_sums] = tuned_bmm_and_sums(a, rows);
      const auto [again, again_sums] = tuned_bmm_and_sums(a, rows);
      EXPECT_TRUE(torch::allclose(first, expected, 1e-4, 1e-4)) << what("tuned product");
      EXPECT_TRUE(torch::allclose(first_sums, expected_sums, 1e-4, 1e-4)) << what("tuned sums");
      EXPECT_TRUE(torch::equal(first, again) && torch::equal(first_sums, again_sums));
    }
  }
  // Nothing to sum over, and no output: the sums still a's.
  const torch::Tensor none = torch::randn({2, 5, 0}, on_gpu),
                      rows = torch::randn({2, 0, 3}, on_gpu);
  EXPECT_TRUE(torch::equal(tuned_bmm_and_sums(none, rows).second, torch::zeros({2, 5}, on_gpu)));
  const torch::Tensor a = torch::randn({2, 5, 7}, on_gpu),
                      no_columns = torch::randn({2, 7, 0}, on_gpu);
  EXPECT_TRUE(torch::allclose(tuned_bmm_and_sums(a, no_columns).second, a.sum(2)));
}

// A shape's first tuned call writes its choice where MINRNN_TUNED_GEMM_FILE says, for later
// processes.
TEST(TunedGemmCuda, AChoiceIsKeptForLaterProcesses) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA GPU visible";
  const testing::TempDir dir;
  const testing::ScopedEnv file("MINRNN_TUNED_GEMM_FILE", dir.file("choices.tsv"));
  const auto on_gpu = torch::TensorOptions().device(torch::kCUDA).dtype(torch::kFloat);
  const torch::Tensor a = torch::randn({3, 41, 23}, on_gpu), b = torch::randn({3, 23, 7}, on_gpu);
  EXPECT_TRUE(torch::allclose(tuned_bmm(a, b, {}), torch::bmm(a, b), 1e-4, 1e-4));
  const std::string kept = testing::read_text(dir.file("choices.tsv"));
  EXPECT_TRUE(kept.find("\tlibtorch") != std::string::npos ||
              kept.find("\tcublaslt ") != std::string::npos)
      << kept;
}

TEST(TunedGemmCuda, AWrongOperandIsRefused) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA GPU visible";
  const auto on_gpu = torch::TensorOptions().device(torch::kCUDA);
  EXPECT_THROW(tuned_bmm(torch::ones({2, 3, 4}, on_gpu), torch::ones({2, 5, 6}, on_gpu), {}),
               std::invalid_argument);
  EXPECT_THROW(tuned_bmm(torch::ones({2, 3, 4}, on_gpu.dtype(torch::kDouble)),
                         torch::ones({2, 4, 6}, on_gpu.dtype(torch::kDouble)), {}),
               std::invalid_argument);
}

// Refused before anything reaches a device (so this runs without a GPU too), each with its
// reason: operands off CUDA, and a candidates' run asked for a bias and a's sums at once
// (cuBLASLt's epilogue has one vector).
TEST(TunedGemm, OperandsItCannotTakeAreRefusedBeforeAnyDeviceWork) {
  const torch::Tensor a = torch::ones({2, 3, 4}), b = torch::ones({2, 4, 6});
  const auto refusal = [](const std::function<void()>& call) -> std::string {
    try {
      call();
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "nothing refused";
  };
  const auto says = [](const std::string& message, const std::string& reason) {
    return message.find(reason) != std::string::npos;
  };
  EXPECT_PRED2(says, refusal([&] { tuned_bmm(a, b, {}); }), "expected CUDA float32");
  EXPECT_PRED2(says, refusal([&] { tuned_bmm_and_sums(a, b); }), "expected CUDA float32");
  int called = 0;
  const auto count = [&](const torch::Tensor&, const torch::Tensor&) { ++called; };
  EXPECT_PRED2(says, refusal([&] {
                 each_cublaslt_candidate(a, b, torch::ones({2, 6}), true, count);
               }),
               "a bias or a's sums, not both");
  EXPECT_EQ(called, 0);
}
#endif

}  // namespace
}  // namespace minrnn::core
