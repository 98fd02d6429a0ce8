// A pack's runs as one model (docs/core.md, "A pack as one model"). P runs of one shape train as
// one model whose every parameter has a leading axis of P (run r's own is param[r]) and whose
// activations hold the P runs' batches one after the other along dim 0 (run r's rows are
// [r·n/P, (r+1)·n/P)): each launch then covers every run, where a pack of lone models launches
// every kernel once a run. Each run must end with the weights it gets alone.
//
// An op learns P from its parameters (stacked_runs), or, without any, from the dropout scope
// (DropoutSeeds::runs()). Where an op has no pass that takes the run axis itself, for_each_run
// runs the lone op on each run's rows and parameters, under that run's dropout seeds, and stacks
// what they give: the same bits as the lone runs, as many passes as lone runs take.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace minrnn::core {

// P where `param` is stacked (a lone parameter's `lone_dim` dimensions and a leading one of P), 0
// where it is lone (`lone_dim` dimensions); anything else is refused, naming `what`.
int64_t stacked_runs(const torch::Tensor& param, int64_t lone_dim, const std::string& what);

// How many runs the dropout scope of this thread holds (ops/dropout.h): 1 outside a pack's.
int64_t dropout_runs();

// Run `run`'s rows of x, whose dim 0 holds `runs` runs' rows one after the other (a view). An
// undefined x stays undefined.
torch::Tensor run_rows(const torch::Tensor& x, int64_t runs, int64_t run);
// Run `run`'s slice of a stacked parameter (a view; undefined stays undefined).
torch::Tensor run_param(const torch::Tensor& param, int64_t run);

// op(r) for r = 0 … runs − 1, each under run r's dropout seeds where the scope is a pack's (which
// must then hold `runs` bases); the k-th outputs of the runs concatenated along dim 0 (undefined
// where op(0)'s k-th is). Every run must take the same number of dropout seeds.
std::vector<torch::Tensor> for_each_run(
    int64_t runs, const std::function<std::vector<torch::Tensor>(int64_t run)>& op);
// The same for an op of one output.
torch::Tensor for_each_run(int64_t runs, const std::function<torch::Tensor(int64_t run)>& op);

// Whether ops take a pack's runs in batched passes (one product, one launch for all runs) on
// `device`: on CUDA, always; on the CPU, only when a test asks (a run at a time gives the lone
// runs' bits there, which the CPU's packs promise).
bool batched_runs(const torch::Device& device);
void set_batched_runs_on_cpu(bool on);

// Each run's column sums of rows (runs · n, width) → (runs, width): a stacked Linear's bias
// gradient (the column-sum kernel on CUDA).
torch::Tensor run_column_sums(const torch::Tensor& rows, int64_t runs);

// Makes `pack` (a module of the runs' structure) the runs' stacked model: each of its parameters
// becomes the runs' same-named parameters stacked along a new leading axis. Its buffers, if any,
// must be the same in every run.
void stack_runs(torch::nn::Module& pack, const std::vector<const torch::nn::Module*>& runs);
// Run `run`'s parameters of a stacked `pack` copied into `lone` (a module of the runs' structure).
void copy_run(const torch::nn::Module& pack, int64_t run, torch::nn::Module& lone);

}  // namespace minrnn::core
