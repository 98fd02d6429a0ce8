// The tuned products' choices kept across processes (ops/tuned_gemm_cuda.h): a process that
// resumes a killed pack, and every process of a sweep, then runs each shape on the algorithm the
// first one timed — the same bits, where each timing its own could pick another. Plain C++ (no
// CUDA): a choice is text to this file.
//
// One file per GPU model and cuBLASLt version (tuned_choice_path), a line a shape: its key, a
// tab, its choice. Read whole when opened; add() merges its shape into what other processes
// added meanwhile, under the lock of io::update_file_atomically (a flock beside the file,
// released however the process ends). A line that does not parse is
// skipped with a warning naming the file and line: the file is a cache, rebuilt by tuning again.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace minrnn::core {

class TunedChoiceFile {
 public:
  // An empty path keeps nothing (choices live only in the process).
  explicit TunedChoiceFile(std::string path);
  const std::string& path() const { return path_; }
  // The choice stored for `key`, or "" where none is.
  std::string find(const std::string& key) const;
  // Stores `choice` for `key` (a key already on disk keeps its first choice, which another
  // process may be running on). Throws io::WriteError naming the file where it cannot be
  // written; the caller decides whether that matters.
  void add(const std::string& key, const std::string& choice);

 private:
  std::string path_;
  std::map<std::string, std::string> choices_;
};

// A choice as a line holds it: "libtorch" (LibTorch's bmm), or "cublaslt " and a cuBLASLt
// algorithm's opaque words (cublasLtMatmulAlgo_t's eight uint64_t) as 128 lowercase hex digits.
struct TunedChoice {
  static constexpr int kAlgoWords = 8;
  bool libtorch = false;
  uint64_t algo[kAlgoWords] = {};
};
std::string choice_text(const TunedChoice& choice);
// Nothing where `text` is neither form exactly.
std::optional<TunedChoice> parse_choice(const std::string& text);

// Where the choices of the GPU `device` (e.g. "NVIDIA H200 sm_90 cuBLASLt 130100") are kept:
// $MINRNN_TUNED_GEMM_FILE where set ("off": nowhere), else
// ${XDG_CACHE_HOME:-$HOME/.cache}/minrnn/tuned-gemm/<device, spaces as '-'>.tsv; "" where
// neither HOME nor XDG_CACHE_HOME is set.
std::string tuned_choice_path(const std::string& device);

}  // namespace minrnn::core
