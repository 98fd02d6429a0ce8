// The complex linear scan h_t = a_t ⊙ h_{t-1} + b_t on real/imaginary pairs: validation, dispatch,
// the CPU kernel's slices (kernels/cpu/scan_complex.h) on torch's threads, and the sequential
// reference.
#include "ops/scan_complex.h"

#include <sstream>
#include <stdexcept>
#include <string>

#include "kernels/cpu/scan_complex.h"
#include "ops/scan_cpu.h"
#include "ops/shared_zeros.h"
#if defined(MINRNN_WITH_CUDA)
#include "ops/scan_cuda.h"
#endif

namespace minrnn::core {
namespace {

using detail::for_each_slice;
using scan_cpu::ComplexPlanes;

struct Inputs {
  torch::Tensor a_re, a_im, b_re, b_im, h0_re, h0_im;
};

// a_re, a_im, b_re, b_im: (B,T,D), one device and dtype; h0_re, h0_im: both (B,D) or both
// undefined (then zeros: with `shared`, zeros_to_read's, for the fast kernels, which only read
// them). Throws std::invalid_argument naming the offending argument.
Inputs check_inputs(const char* who, const torch::Tensor& a_re, const torch::Tensor& a_im,
                    const torch::Tensor& b_re, const torch::Tensor& b_im,
                    const torch::Tensor& h0_re, const torch::Tensor& h0_im, bool shared = false) {
  const std::string w(who);
  if (!a_re.defined()) throw std::invalid_argument(w + ": a_re is required");
  if (a_re.dim() != 3) {
    throw std::invalid_argument(w + ": expected a_re of shape (B, T, D), got " + shape_of(a_re));
  }
  const std::pair<const char*, const torch::Tensor*> rest[] = {
      {"a_im", &a_im}, {"b_re", &b_re}, {"b_im", &b_im}};
  for (const auto& [name, t] : rest) {
    if (!t->defined()) throw std::invalid_argument(w + ": " + name + " is required");
    if (t->sizes() != a_re.sizes()) {
      throw std::invalid_argument(w + ": expected " + name + " of the shape of a_re " +
                                  shape_of(a_re) + ", got " + shape_of(*t));
    }
    if (t->device() != a_re.device() || t->scalar_type() != a_re.scalar_type()) {
      throw std::invalid_argument(w + ": " + name + " must share a_re's device and dtype");
    }
  }
  const int64_t B = a_re.size(0), D = a_re.size(2);
  if (h0_re.defined() != h0_im.defined()) {
    throw std::invalid_argument(w + ": h0_re and h0_im must be given together");
  }
  Inputs in{a_re, a_im, b_re, b_im, h0_re, h0_im};
  if (!h0_re.defined()) {
    in.h0_re = shared ? zeros_to_read({B, D}, a_re) : torch::zeros({B, D}, a_re.options());
    in.h0_im = shared ? in.h0_re : torch::zeros({B, D}, a_re.options());
    return in;
  }
  for (const auto& [name, t] : {std::pair{"h0_re", &h0_re}, std::pair{"h0_im", &h0_im}}) {
    if (t->dim() != 2 || t->size(0) != B || t->size(1) != D) {
      throw std::invalid_argument(w + ": expected " + name + " of shape (B, D) = (" +
                                  std::to_string(B) + ", " + std::to_string(D) + "), got " +
                                  shape_of(*t));
    }
  }
  in.h0_re = h0_re.to(a_re.options());
  in.h0_im = h0_im.to(a_re.options());
  return in;
}

template <typename T>
ComplexPlanes<const T> planes(const torch::Tensor& re, const torch::Tensor& im) {
  return {re.data_ptr<T>(), im.data_ptr<T>()};
}
template <typename T>
ComplexPlanes<T> mutable_planes(torch::Tensor& re, torch::Tensor& im) {
  return {re.data_ptr<T>(), im.data_ptr<T>()};
}

template <typename T>
void complex_forward(ComplexPlanes<const T> a, ComplexPlanes<const T> b, ComplexPlanes<const T> h0,
                     ComplexPlanes<T> h, ComplexPlanes<T> h_last, int64_t B, int64_t L, int64_t D) {
  for_each_slice(B, D, [&](int64_t row, int64_t d0, int64_t d1) {
    scan_cpu::complex_forward_slice<T>(a, b, h0, h, h_last, row, d0, d1, L, D);
  });
}

template <typename T>
void complex_backward(ComplexPlanes<const T> a, ComplexPlanes<const T> h, ComplexPlanes<const T> h0,
                      ComplexPlanes<const T> grad_h, ComplexPlanes<const T> grad_last,
                      ComplexPlanes<T> da, ComplexPlanes<T> db, ComplexPlanes<T> dh0, int64_t B,
                      int64_t L, int64_t D) {
  for_each_slice(B, D, [&](int64_t row, int64_t d0, int64_t d1) {
    scan_cpu::complex_backward_slice<T>(a, h, h0, grad_h, grad_last, da, db, dh0, row, d0, d1, L,
                                        D);
  });
}

class ComplexScanFunction : public torch::autograd::Function<ComplexScanFunction> {
 public:
  static torch::autograd::variable_list forward(
      torch::autograd::AutogradContext* ctx, const torch::Tensor& a_re_in,
      const torch::Tensor& a_im_in, const torch::Tensor& b_re_in, const torch::Tensor& b_im_in,
      const torch::Tensor& h0_re_in, const torch::Tensor& h0_im_in) {
    ctx->set_materialize_grads(false);  // outputs nothing reads: shared zeros (or_zeros)
    torch::Tensor a_re = a_re_in.contiguous(), a_im = a_im_in.contiguous();
    torch::Tensor b_re = b_re_in.contiguous(), b_im = b_im_in.contiguous();
    torch::Tensor h0_re = h0_re_in.contiguous(), h0_im = h0_im_in.contiguous();
    const int64_t B = a_re.size(0), L = a_re.size(1), D = a_re.size(2);
    torch::Tensor h_re = torch::empty_like(a_re), h_im = torch::empty_like(a_re);
    torch::Tensor last_re = torch::empty_like(h0_re), last_im = torch::empty_like(h0_re);
#if defined(MINRNN_WITH_CUDA)
    if (a_re.is_cuda()) {
      ComplexPair h{h_re, h_im}, last{last_re, last_im};
      complex_scan_forward_cuda({a_re, a_im}, {b_re, b_im}, {h0_re, h0_im}, h, last);
    } else
#endif
    {
      AT_DISPATCH_FLOATING_TYPES(a_re.scalar_type(), "linear_scan_complex_cpu_forward", [&] {
        complex_forward<scalar_t>(planes<scalar_t>(a_re, a_im), planes<scalar_t>(b_re, b_im),
                                  planes<scalar_t>(h0_re, h0_im),
                                  mutable_planes<scalar_t>(h_re, h_im),
                                  mutable_planes<scalar_t>(last_re, last_im), B, L, D);
      });
    }
    ctx->save_for_backward({a_re, a_im, h_re, h_im, h0_re, h0_im});
    return {h_re, h_im, last_re, last_im};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto s = ctx->get_saved_variables();
    const torch::Tensor &a_re = s[0], &a_im = s[1], &h_re = s[2], &h_im = s[3], &h0_re = s[4],
                        &h0_im = s[5];
    auto or_zeros = [](const torch::Tensor& g, const torch::Tensor& like) {  // read only
      return g.defined() ? g.contiguous() : zeros_to_read(like.sizes(), like);
    };
    torch::Tensor g_re = or_zeros(grads[0], h_re), g_im = or_zeros(grads[1], h_re);
    torch::Tensor gl_re = or_zeros(grads[2], h0_re), gl_im = or_zeros(grads[3], h0_re);
    const int64_t B = a_re.size(0), L = a_re.size(1), D = a_re.size(2);
    torch::Tensor da_re = torch::empty_like(a_re), da_im = torch::empty_like(a_re);
    torch::Tensor db_re = torch::empty_like(a_re), db_im = torch::empty_like(a_re);
    torch::Tensor dh0_re = torch::empty_like(h0_re), dh0_im = torch::empty_like(h0_re);
#if defined(MINRNN_WITH_CUDA)
    if (a_re.is_cuda()) {
      ComplexPair da{da_re, da_im}, db{db_re, db_im}, dh0{dh0_re, dh0_im};
      complex_scan_backward_cuda({a_re, a_im}, {h_re, h_im}, {h0_re, h0_im}, {g_re, g_im},
                                 {gl_re, gl_im}, da, db, dh0);
      return {da_re, da_im, db_re, db_im, dh0_re, dh0_im};
    }
#endif
    AT_DISPATCH_FLOATING_TYPES(a_re.scalar_type(), "linear_scan_complex_cpu_backward", [&] {
      complex_backward<scalar_t>(planes<scalar_t>(a_re, a_im), planes<scalar_t>(h_re, h_im),
                                 planes<scalar_t>(h0_re, h0_im), planes<scalar_t>(g_re, g_im),
                                 planes<scalar_t>(gl_re, gl_im),
                                 mutable_planes<scalar_t>(da_re, da_im),
                                 mutable_planes<scalar_t>(db_re, db_im),
                                 mutable_planes<scalar_t>(dh0_re, dh0_im), B, L, D);
    });
    return {da_re, da_im, db_re, db_im, dh0_re, dh0_im};
  }
};

}  // namespace

ComplexScanResult linear_scan_complex_fast(const torch::Tensor& a_re, const torch::Tensor& a_im,
                                           const torch::Tensor& b_re, const torch::Tensor& b_im,
                                           const torch::Tensor& h0_re, const torch::Tensor& h0_im) {
  auto out = ComplexScanFunction::apply(a_re, a_im, b_re, b_im, h0_re, h0_im);
  return {out[0], out[1], out[2], out[3]};
}

ComplexScanResult linear_scan_complex(const torch::Tensor& a_re, const torch::Tensor& a_im,
                                      const torch::Tensor& b_re, const torch::Tensor& b_im,
                                      const torch::Tensor& h0_re, const torch::Tensor& h0_im) {
  Inputs in = check_inputs("linear_scan_complex", a_re, a_im, b_re, b_im, h0_re, h0_im,
                           /*shared=*/true);
  // CUDA runs its kernel for every float dtype (accumulating in float32 or float64), the CPU
  // kernel float32/float64; other devices take the loop.
  if (a_re.is_cuda() && cuda_scan_available()) {
    return linear_scan_complex_fast(in.a_re, in.a_im, in.b_re, in.b_im, in.h0_re, in.h0_im);
  }
  if (!a_re.is_cpu()) return linear_scan_complex_sequential(a_re, a_im, b_re, b_im, h0_re, h0_im);
  const auto dtype = a_re.scalar_type();
  if (dtype == torch::kFloat || dtype == torch::kDouble) {
    return linear_scan_complex_fast(in.a_re, in.a_im, in.b_re, in.b_im, in.h0_re, in.h0_im);
  }
  // Low-precision CPU inputs accumulate in float32, as the real scan does.
  auto f = [](const torch::Tensor& t) { return t.to(torch::kFloat); };
  ComplexScanResult r = linear_scan_complex_fast(f(in.a_re), f(in.a_im), f(in.b_re), f(in.b_im),
                                                 f(in.h0_re), f(in.h0_im));
  return {r.h_re.to(dtype), r.h_im.to(dtype), r.h_last_re.to(dtype), r.h_last_im.to(dtype)};
}

ComplexScanResult linear_scan_complex_sequential(
    const torch::Tensor& a_re, const torch::Tensor& a_im, const torch::Tensor& b_re,
    const torch::Tensor& b_im, const torch::Tensor& h0_re, const torch::Tensor& h0_im) {
  Inputs in = check_inputs("linear_scan_complex_sequential", a_re, a_im, b_re, b_im, h0_re, h0_im);
  torch::Tensor hr = in.h0_re, hi = in.h0_im;
  std::vector<torch::Tensor> all_re, all_im;
  for (int64_t t = 0; t < a_re.size(1); ++t) {
    torch::Tensor ar = a_re.select(1, t), ai = a_im.select(1, t);
    torch::Tensor next_re = ar * hr - ai * hi + b_re.select(1, t);
    torch::Tensor next_im = ar * hi + ai * hr + b_im.select(1, t);
    hr = next_re;
    hi = next_im;
    all_re.push_back(hr);
    all_im.push_back(hi);
  }
  auto stack = [&](const std::vector<torch::Tensor>& hs) {
    return hs.empty() ? torch::empty({a_re.size(0), 0, a_re.size(2)}, a_re.options())
                      : torch::stack(hs, 1);
  };
  return {stack(all_re), stack(all_im), hr, hi};
}

}  // namespace minrnn::core
