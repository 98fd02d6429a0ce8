#include "rl/checkpoint.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "io/atomic_file.h"
#include "io/input_file.h"
#include "io/isolated.h"
#include "rl/run_files.h"

namespace minrnn::rl {
namespace {

namespace fs = std::filesystem;

// A checkpoint holds its model's weights, so a model larger than the file is a corrupt (or hostile)
// checkpoint: refused before anything that size is allocated. The bound counts only weights every
// backbone has (the embeddings, and at least d x d per layer: each block's MLP has 8 d^2).
void check_model_fits(const std::string& path, const TrainConfig& c, int64_t obs_dim,
                      int64_t act_dim) {
  std::error_code ec;
  const double file_bytes = static_cast<double>(fs::file_size(path, ec));
  if (obs_dim < 1 || act_dim < 1 || ec || min_model_weights(c, obs_dim, act_dim) * 4 > file_bytes) {
    throw std::runtime_error(
        path + ": not a readable minrnn checkpoint: its model (obs_dim " + std::to_string(obs_dim) +
        ", act_dim " + std::to_string(act_dim) + ", embed_dim " + std::to_string(c.embed_dim) +
        ", n_layers " + std::to_string(c.n_layers) + ", max_ep_len " +
        std::to_string(c.max_ep_len) + ") cannot fit in the file's " +
        std::to_string(static_cast<int64_t>(file_bytes)) + " bytes (corrupt file?)");
  }
}

// Every tensor of the loaded model has the shape and dtype its config builds: LibTorch's archive
// reader replaces each tensor whole without checking, and the packed engine reads the shapes the
// config says (a timestep table cut short was read past its end, in the caller's act()).
// The model's parameters and buffers as shapes and dtypes only (meta tensors: the archive reader
// replaces the tensors' contents in place, so the tensors themselves would change with it).
std::map<std::string, torch::Tensor> tensor_shapes(DecisionModel& model) {
  std::map<std::string, torch::Tensor> shapes;
  for (const auto& tensors : {model->named_parameters(), model->named_buffers()})
    for (const auto& [name, t] : tensors.pairs())
      shapes[name] = torch::empty(t.sizes(), t.options().device(torch::kMeta));
  return shapes;
}

void check_model_shapes(const fs::path& path, DecisionModel& model,
                        const std::map<std::string, torch::Tensor>& built) {
  for (const auto& [name, loaded] : tensor_shapes(model)) {
    const torch::Tensor& want = built.at(name);
    if (loaded.sizes() != want.sizes() || loaded.dtype() != want.dtype()) {
      std::ostringstream why;
      why << "tensor '" << name << "' is " << loaded.dtype() << " " << loaded.sizes()
          << ", its config builds " << want.dtype() << " " << want.sizes();
      throw std::runtime_error(path.string() + ": not a readable minrnn checkpoint: " + why.str());
    }
  }
}

// The state normalization the policy divides by: obs_dim finite means and positive stds.
void check_normalization(const fs::path& path, const Agent& agent) {
  const torch::Tensor& mean = agent.state_mean;
  const torch::Tensor& std = agent.state_std;
  const bool ok = mean.dim() == 1 && std.dim() == 1 && mean.size(0) == std.size(0) &&
                  mean.is_floating_point() && std.is_floating_point() &&
                  torch::isfinite(mean).all().item<bool>() &&
                  torch::isfinite(std).all().item<bool>() && (std > 0).all().item<bool>();
  if (!ok) {
    throw std::runtime_error(path.string() +
                             ": not a readable minrnn checkpoint: state_mean and state_std must "
                             "be vectors of one length, finite, the stds > 0");
  }
}

Agent load_agent_here(const fs::path& path, const torch::Device& device) {
  torch::serialize::InputArchive archive, model_archive;
  c10::IValue config_text, env;
  Agent agent;
  torch::Tensor step;
  try {
    // Onto `device` as it is read: a CUDA-written archive cannot even be read where there is no
    // GPU otherwise, and resume needs its optimizer state beside the parameters.
    archive.load_from(path.string(), device);
    archive.read("config", config_text);
    archive.read("env", env);
    archive.read("step", step);
    archive.read("state_mean", agent.state_mean);
    archive.read("state_std", agent.state_std);
    agent.config = parse_config(config_text.toStringRef(), path.string() + " (config)");
    agent.env = env.toStringRef();
    agent.step = step.item<int64_t>();
    torch::Tensor ref_scores;
    c10::IValue ref_source;
    if (archive.try_read("ref_scores", ref_scores) && ref_scores.numel() == 2) {
      ref_scores = ref_scores.to(torch::kCPU, torch::kFloat64);
      agent.ref_min_score = ref_scores[0].item<double>();
      agent.ref_max_score = ref_scores[1].item<double>();
      if (archive.try_read("ref_source", ref_source) && ref_source.isString())
        agent.ref_source = ref_source.toStringRef();
    }
    check_normalization(path, agent);
    const int64_t obs_dim = agent.state_mean.size(0);
    torch::Tensor act_dim_tensor;
    archive.read("act_dim", act_dim_tensor);
    const int64_t act_dim = act_dim_tensor.item<int64_t>();
    check_model_fits(path.string(), agent.config, obs_dim, act_dim);
    archive.read("model", model_archive);
    agent.model = DecisionModel(model_options(agent.config, obs_dim, act_dim));
    const std::map<std::string, torch::Tensor> built = tensor_shapes(agent.model);
    // Every weight finite: a NaN among them made every action NaN (a docs walk, 2026-11-29) —
    // sent on to a user's plant. Training never checkpoints a non-finite loss's weights.
    check_archive_finite(model_archive, path.string(), "not a readable minrnn checkpoint: tensor",
                         "");
    agent.model->load(model_archive);
    check_model_shapes(path, agent.model, built);
  } catch (const c10::Error& e) {
    throw std::runtime_error(path.string() +
                             ": not a readable minrnn checkpoint: " + e.what_without_backtrace());
  } catch (const std::invalid_argument&) {
    throw;                             // the config's errors name the file already
  } catch (const std::exception& e) {  // TorchScript's parser, std::out_of_range, ours
    const std::string what = e.what();
    throw std::runtime_error(what.rfind(path.string(), 0) == 0
                                 ? what
                                 : path.string() + ": not a readable minrnn checkpoint: " + what);
  }
  agent.model->to(device);
  agent.model->eval();
  agent.state_mean = agent.state_mean.to(torch::kCPU);
  agent.state_std = agent.state_std.to(torch::kCPU);
  return agent;
}

}  // namespace

namespace {

// Little-endian fields of a zip record.
uint64_t field(const char* at, int bytes) {
  uint64_t value = 0;
  for (int i = bytes - 1; i >= 0; --i) value = value << 8 | static_cast<unsigned char>(at[i]);
  return value;
}

// The central directory's place and size: from the zip64 end record LibTorch writes before the
// end record (its locator the 20 bytes before that), else from the end record itself.
struct Directory {
  uint64_t offset = 0, size = 0;
};
Directory directory_of(std::ifstream& in, uint64_t file_bytes, const char* end_record) {
  char locator[20] = {}, zip64[56] = {};
  if (file_bytes >= 22 + 20 + 56 && in.seekg(static_cast<std::streamoff>(file_bytes - 42)) &&
      in.read(locator, sizeof locator) && field(locator, 4) == 0x07064b50) {
    const uint64_t at = field(locator + 8, 8);
    if (at <= file_bytes - 56 && in.seekg(static_cast<std::streamoff>(at)) &&
        in.read(zip64, sizeof zip64) && field(zip64, 4) == 0x06064b50)
      return {field(zip64 + 48, 8), field(zip64 + 40, 8)};
  }
  in.clear();
  return {field(end_record + 16, 4), field(end_record + 12, 4)};
}

// The first entry whose bytes are not those its CRC-32 was taken of, by name, or why the
// directory cannot be followed ("" where every entry is whole). LibTorch's reader checks no CRC
// (miniz built without it): an overwritten weight loaded silently (a walk, 2026-11-30, 64 floats
// of archive/data/15, evaluated as 93.1 where the checkpoint gave 93.7). Entries are stored, as
// LibTorch writes them; a compressed one (another writer's) is left to the reader.
std::string first_damaged_entry(std::ifstream& in, uint64_t file_bytes, const char* end_record) {
  const Directory dir = directory_of(in, file_bytes, end_record);
  std::string cd(dir.size <= file_bytes ? dir.size : 0, '\0');
  if (dir.size > file_bytes || dir.offset > file_bytes - dir.size ||
      !in.seekg(static_cast<std::streamoff>(dir.offset)) || !in.read(cd.data(), cd.size()))
    return "its zip directory lies outside the file (a damaged file?)";
  std::vector<char> chunk(size_t{1} << 20);
  for (size_t at = 0; at + 46 <= cd.size() && field(&cd[at], 4) == 0x02014b50;) {
    const char* e = &cd[at];
    const uint64_t name_bytes = field(e + 28, 2),
                   next = 46 + name_bytes + field(e + 30, 2) + field(e + 32, 2);
    const std::string name = cd.substr(at + 46, name_bytes);
    at += next;
    uint64_t left = field(e + 20, 4);
    const uint64_t local = field(e + 42, 4);
    // Compressed (its CRC is of the inflated bytes), or of zip64 sizes (4 GiB, no model of ours).
    if (field(e + 10, 2) != 0 || left == 0xffffffff || local == 0xffffffff) continue;
    char header[30] = {};
    if (!in.seekg(static_cast<std::streamoff>(local)) || !in.read(header, sizeof header) ||
        field(header, 4) != 0x04034b50)
      return "its zip entry '" + name +
             "' has no header where the directory says (a damaged file?)";
    in.seekg(static_cast<std::streamoff>(field(header + 26, 2) + field(header + 28, 2)),
             std::ios::cur);
    uLong crc = crc32(0L, Z_NULL, 0);
    while (left > 0 && in) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(left, chunk.size()));
      in.read(chunk.data(), static_cast<std::streamsize>(n));
      crc = crc32(crc, reinterpret_cast<const Bytef*>(chunk.data()), static_cast<uInt>(n));
      left -= n;
    }
    if (!in) return "its zip entry '" + name + "' runs past the file's end (a damaged file?)";
    if (crc != field(e + 16, 4)) {
      return "its zip entry '" + name +
             "' does not hold the bytes it was written with (its CRC-32 differs: a damaged disk "
             "or copy?)";
    }
  }
  return "";
}

}  // namespace

std::string why_not_whole_archive(const std::string& path, bool entries) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::string("cannot be read: ") + std::strerror(errno);
  char magic[4] = {};
  in.read(magic, sizeof magic);
  if (std::memcmp(magic, "PK\x03\x04", 4) != 0) {
    return "not a zip archive, as LibTorch writes checkpoint.pt (give a run directory or its "
           "checkpoint.pt)";
  }
  // LibTorch ends its archives with a zip end record and no comment: its last 22 bytes.
  char end[22] = {};
  in.seekg(-22, std::ios::end);
  const auto file_bytes = static_cast<uint64_t>(in.tellg()) + 22;
  in.read(end, sizeof end);
  if (!in || std::memcmp(end, "PK\x05\x06", 4) != 0)
    return "cut short (its zip's end record is missing: a copy stopped early, a full disk?)";
  return entries ? first_damaged_entry(in, file_bytes, end) : "";
}

Agent load_agent(const std::string& run_dir_or_file, const torch::Device& device) {
  fs::path path = run_dir_or_file;
  std::error_code ec;
  const fs::file_status given = fs::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {  // a folder on the way we cannot read
    throw std::runtime_error(run_dir_or_file + ": cannot look here: " + ec.message());
  }
  if (!fs::exists(given)) {
    throw std::invalid_argument(io::no_such(run_dir_or_file, "run directory or checkpoint file"));
  }
  if (fs::is_directory(given)) path = RunFiles(path).checkpoint;
  const fs::file_status file = fs::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw std::runtime_error(path.string() + ": cannot look here: " + ec.message());
  if (!fs::exists(file)) {
    // A folder named like the file (a copy gone wrong) is no run without a checkpoint yet.
    const std::string name = path.filename().string();
    const bool named_like_the_file = path.parent_path().filename() == name;
    throw std::invalid_argument(
        run_dir_or_file + (named_like_the_file
                               ? ": a folder, not a checkpoint file (move it away)"
                               : ": a folder without a " + name +
                                     " (no run, or one that has not saved a checkpoint yet)"));
  }
  if (!fs::is_regular_file(file))
    throw std::invalid_argument(path.string() + ": not a checkpoint file (a folder or a device)");
  // A config or a dataset given for a run, a file cut short: one line, where LibTorch's zip reader
  // says a paragraph.
  if (const std::string why = why_not_whole_archive(path.string()); !why.empty())
    throw NotWholeCheckpoint(path.string() + ": not a readable minrnn checkpoint: " + why);
  // LibTorch's reader runs the file's pickle and TorchScript: a hostile or corrupt file can make
  // it crash, or ask for any amount of memory (found by tests/fuzz). It reads the file in a child
  // process first, with its memory bounded; only a file that loads there is loaded here. One load
  // at a time: a fork while another thread built a model (holding LibTorch's random-number lock)
  // left the child waiting on that lock forever (Policy::load on 6 threads, 2026-11-29). A lock
  // some other thread of the caller's holds is bounded by the child's time limit.
  static std::mutex one_load_at_a_time;
  const std::lock_guard<std::mutex> lock(one_load_at_a_time);
  if (!io::read_in_process()) {
    std::error_code ec;
    const size_t file_bytes = fs::file_size(path, ec);
    constexpr double kReadSeconds = 120;  // a checkpoint of minrnn's sizes reads in well under 1 s
    const io::ProbeResult probe = io::probe_in_child(
        [&] {
          at::set_num_threads(1);  // no OpenMP team in a forked child
          load_agent_here(path, torch::kCPU);
        },
        (size_t{2} << 30) + 16 * file_bytes, kReadSeconds);
    if (!probe.ok) {
      if (probe.died && probe.message.rfind("did not finish", 0) == 0) {
        throw std::runtime_error(
            path.string() + ": LibTorch's reader " + probe.message +
            " in the child process that checks the file: another thread of this process using "
            "LibTorch when it forked may hold a lock the reader needs. Load policies before "
            "starting such threads, or set MINRNN_READ_IN_PROCESS=1");
      }
      if (probe.died) {
        throw std::runtime_error(path.string() + ": not a readable minrnn checkpoint: LibTorch's " +
                                 "reader " + probe.message + " on it (a corrupt file?)");
      }
      const std::string& m = probe.message;
      throw std::runtime_error(m.find(path.string()) != std::string::npos
                                   ? m
                                   : path.string() + ": not a readable minrnn checkpoint: " + m);
    }
  }
  return load_agent_here(path, device);
}

void save_checkpoint(const std::string& path, Agent& agent, torch::optim::Optimizer& optimizer) {
  torch::serialize::OutputArchive archive, model_archive, optim_archive;
  agent.model->save(model_archive);
  optimizer.save(optim_archive);
  archive.write("model", model_archive);
  archive.write("optimizer", optim_archive);
  archive.write("step", torch::tensor(agent.step));
  archive.write("act_dim", torch::tensor(agent.model->options().act_dim));
  archive.write("state_mean", agent.state_mean);
  archive.write("state_std", agent.state_std);
  archive.write("config", c10::IValue(to_yaml(agent.config)));
  archive.write("env", c10::IValue(agent.env));
  archive.write("ref_scores", torch::tensor({agent.ref_min_score, agent.ref_max_score},
                                            torch::TensorOptions().dtype(torch::kFloat64)));
  archive.write("ref_source", c10::IValue(agent.ref_source));
  save_archive_atomically(archive, path);
}

namespace {

void check_archive_finite(torch::serialize::InputArchive& archive, const std::string& path,
                          const std::string& what, const std::string& remedy,
                          const std::string& prefix) {
  for (const std::string& key : archive.keys()) {
    torch::Tensor t;
    torch::serialize::InputArchive nested;
    if (archive.try_read(key, t)) {
      if (t.is_floating_point() && !torch::isfinite(t).all().item<bool>()) {
        throw std::runtime_error(path + ": " + what + " '" + prefix + key +
                                 "' holds values that are not finite (a damaged file?)" +
                                 (remedy.empty() ? "" : "; " + remedy));
      }
    } else if (archive.try_read(key, nested)) {
      check_archive_finite(nested, path, what, remedy, prefix + key + ".");
    }
  }
}

}  // namespace

void check_archive_finite(torch::serialize::InputArchive& archive, const std::string& path,
                          const std::string& what, const std::string& remedy) {
  check_archive_finite(archive, path, what, remedy, "");
}

void load_optimizer_state(const std::string& path, const torch::Device& device,
                          torch::optim::Optimizer& optimizer) {
  torch::serialize::InputArchive archive, optim_archive;
  archive.load_from(path, device);
  archive.read("optimizer", optim_archive);
  // Damaged bytes in a moment resumed into NaN weights in rows no batch used, so no loss showed
  // it, and only `eval` of the finished run refused them (a walk, 2026-11-29).
  check_archive_finite(optim_archive, path, "not a readable minrnn checkpoint: optimizer state",
                       "pass --force to train the run anew");
  optimizer.load(optim_archive);
}

void save_archive_atomically(torch::serialize::OutputArchive& archive, const std::string& path) {
  io::AtomicFile out(path);
  try {
    // The callback must not throw (it runs inside torch's zip writer), nor report a short write
    // (torch 2.11 then throws from a destructor: std::terminate). A failed write is recorded,
    // the rest of the archive goes nowhere, and check() below raises the failure.
    archive.save_to([&out](const void* data, size_t size) -> size_t {
      out.try_write(data, size);
      return size;
    });
    out.check();
  } catch (const std::exception& e) {
    out.check();  // the OS reason, when a write failed
    throw io::WriteError(io::write_failure(path, e.what()));
  }
  out.commit();
}

}  // namespace minrnn::rl
