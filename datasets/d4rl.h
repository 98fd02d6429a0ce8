// D4RL v2 HDF5 files: a plain struct holding every field in one contiguous buffer, a validating
// reader and a writer that produces the same layout D4RL's files have (REFERENCE.md §2).
//
//   data::Transitions d = data::read_d4rl(data::resolve_d4rl_path("hopper-medium-v2"));
//   data::write_d4rl("my_hopper.hdf5", collected, {});
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace minrnn::data {

// A float array with its shape, row-major (infos/* and metadata/* entries). A scalar has shape {}.
struct FloatArray {
  std::vector<int64_t> shape;
  std::vector<float> values;
};

// metadata/* keyed by the path below "metadata/", e.g. "algorithm", "iteration",
// "policy/fc0/weight". The writer writes strings as fixed-length HDF5 strings, ints as int32 when
// they fit (else int64) and arrays as float32.
struct D4rlMetadata {
  std::map<std::string, std::string> strings;  // algorithm, policy/nonlinearity, ...
  std::map<std::string, int64_t> ints;         // iteration
  std::map<std::string, FloatArray> arrays;    // policy/*/weight, policy/*/bias
  std::vector<std::string> unread;             // entries of a type the reader does not convert
  bool empty() const { return strings.empty() && ints.empty() && arrays.empty(); }
};

// One D4RL dataset: N steps, every per-step field one contiguous row-major buffer.
struct Transitions {
  int obs_dim = 0;
  int act_dim = 0;
  std::vector<float> observations;          // (N, obs_dim)
  std::vector<float> next_observations;     // (N, obs_dim), or empty when the file has none
  std::vector<float> actions;               // (N, act_dim)
  std::vector<float> rewards;               // (N)
  std::vector<uint8_t> terminals;           // (N) 0/1: the env terminated (fell) at this step
  std::vector<uint8_t> timeouts;            // (N) 0/1: the time limit ended the episode here
  std::map<std::string, FloatArray> infos;  // infos/<name>, first dimension N
  D4rlMetadata metadata;

  int64_t num_steps() const { return static_cast<int64_t>(rewards.size()); }
  // Appends one transition (a collector's loop); next_obs may be nullptr when the data keeps none.
  void append_step(const float* obs, const float* action, float reward, const float* next_obs,
                   bool terminal, bool timeout);
  // Throws std::invalid_argument naming `what` (a file or "data") and the offending field when
  // sizes disagree, N is 0, a flag is not 0/1 or a float is NaN/Inf.
  void validate(const std::string& what) const;
  // A 64-bit hash of what training reads (widths, observations, actions, rewards, terminals,
  // timeouts), as 16 hex digits: two files of the same data agree wherever they are, and a resume
  // on other data is told apart (rl::record_env keeps it in env.json).
  std::string fingerprint() const;
};

struct ReadOptions {
  bool read_next_observations = true;
  bool read_infos = true;  // infos/qpos, infos/qvel, ...: large; training does not need them
  bool read_metadata = true;
  // Environment whose dimensions the file must have: "hopper" / "halfcheetah" / "walker2d"; ""
  // checks none here (load_dataset guesses one from the name: Dataset::env_named_apart), nor
  // does "none".
  std::string env;

  // These options without what training never reads (next states, infos, metadata).
  ReadOptions only_what_training_reads() const {
    ReadOptions lean = *this;
    lean.read_next_observations = lean.read_infos = lean.read_metadata = false;
    return lean;
  }
};

// The index of the first NaN or infinity in `values`, -1 when none (Transitions::validate's check,
// which a Minari reader runs episode by episode to name the episode).
int64_t first_non_finite(const std::vector<float>& values);

// Reads and validates a D4RL-layout file. Accepts floating-point fields (float16/32/64), rewards
// (N) or (N,1), flags stored as h5py bool (enum int8) or any integer 0/1, gzip/shuffle/chunked
// storage. Throws std::runtime_error (file not readable, not HDF5, corrupt) or
// std::invalid_argument (a key missing, wrong rank/dtype, length mismatch, NaN/Inf, empty, dims not
// those of the environment), always naming the file and the key.
Transitions read_d4rl(const std::string& path, const ReadOptions& options = {});

// Maps an id like "hopper-medium-replay-v2" to $D4RL_DATASET_DIR (or ~/.d4rl/datasets) /
// "hopper_medium_replay-v2.hdf5". A path that exists is returned unchanged. Throws when the file is
// absent, naming where it belongs and the `minrnn data download` command that fetches it. Never
// downloads itself (fetch/ does, and sits above this library).
std::string resolve_d4rl_path(const std::string& id_or_path);

// What a D4RL-layout file minrnn made says of itself (D4RL's own files say neither): the Gymnasium
// env_spec JSON `minrnn collect` keeps in metadata/env_spec ("" where none), and whether `minrnn
// data synth` made it (metadata/algorithm kSyntheticAlgorithm: random states and actions). Read on
// its own so training, which skips metadata, still sees it.
inline constexpr const char* kSyntheticAlgorithm = "synthetic";
struct D4rlMadeHere {
  std::string env_spec;
  bool synthetic = false;
};
D4rlMadeHere read_d4rl_made_here(const std::string& path);

// The D4RL file name for an id: "hopper-medium-replay-v2" -> "hopper_medium_replay-v2.hdf5".
std::string d4rl_file_name(const std::string& id);

struct D4rlWriteOptions {
  bool overwrite = false;  // refuse to replace an existing file unless set
  int gzip_level = 4;      // h5py's default for compression="gzip"
};

// Writes `data` (validated first) with D4RL's keys and dtypes: float32 fields, bool flags as
// h5py's enum int8 {FALSE=0, TRUE=1}, gzip-compressed chunked datasets, infos/ and metadata/
// groups. Writes `<path>.tmp` and renames it, so a failed write leaves no file at `path`.
void write_d4rl(const std::string& path, const Transitions& data,
                const D4rlWriteOptions& options = {});

}  // namespace minrnn::data
