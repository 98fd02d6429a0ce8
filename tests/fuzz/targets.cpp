// The fuzz targets: minrnn's readers of files a user hands it, seeded with files minrnn's own
// writers make (write_d4rl, the Minari layout the tests write, configs/, a real training run's
// checkpoint).
#include <torch/torch.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "datasets/d4rl.h"
#include "datasets/episodes.h"
#include "rl/config.h"
#include "rl/trainer.h"
#include "sweep/sweep.h"
#include "tests/datasets/fixtures.h"
#include "tests/datasets/minari_fixtures.h"
#include "tests/fuzz/fuzz.h"
#include "tests/paths.h"
#include "tests/text_file.h"

namespace minrnn::fuzz {
namespace {

namespace fs = std::filesystem;

using minrnn::testing::read_text;
using minrnn::testing::write_text;

std::vector<std::string> files_in(const fs::path& dir, const std::string& extension) {
  std::vector<fs::path> paths;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == extension) paths.push_back(e.path());
  std::sort(paths.begin(), paths.end());
  std::vector<std::string> texts;
  for (const auto& p : paths) texts.push_back(read_text(p));
  return texts;
}

// --- D4RL .hdf5 -------------------------------------------------------------------------------

std::vector<std::string> d4rl_seeds(const std::string& work) {
  std::vector<std::string> seeds;
  auto add = [&](const data::Transitions& d, int gzip) {
    const std::string path = work + "/seed.hdf5";
    data::D4rlWriteOptions o;
    o.gzip_level = gzip;
    o.overwrite = true;
    data::write_d4rl(path, d, o);
    seeds.push_back(read_text(path));
  };
  data::Transitions small = data::testing::make_data(2, 1, {2, 3}, 1);
  add(small, 0);
  data::Transitions hopper = data::testing::make_data(11, 3, {4, 5, 3}, 2);
  add(hopper, 0);
  // With infos and metadata (strings, integers, arrays) and compressed: every key a D4RL file has.
  const int64_t n = hopper.num_steps();
  hopper.infos["qpos"] = data::FloatArray{{n, 6}, std::vector<float>(n * 6, 0.5f)};
  hopper.metadata.strings["algorithm"] = "SAC";
  hopper.metadata.ints["iteration"] = 7;
  hopper.metadata.arrays["policy/fc0/bias"] = data::FloatArray{{4}, {1, 2, 3, 4}};
  add(hopper, 4);
  return seeds;
}

void d4rl_run(const std::string& input, const std::string& work, std::string* must_name) {
  const std::string path = work + "/input.hdf5";
  write_text(path, input);
  *must_name = path;
  const data::Dataset ds = data::load_dataset(path);  // read, validate, split into episodes
  (void)ds;
}

// --- Minari dataset ---------------------------------------------------------------------------

// A Minari-layout dataset as the reader's tests write it (tests/datasets/minari_fixtures.h), its
// episodes ending by a truncation and a termination in turn.
void write_minari(const fs::path& dir, const std::vector<int>& lengths) {
  std::vector<bool> terminated;
  for (size_t e = 0; e < lengths.size(); ++e) terminated.push_back(e % 2 == 1);
  data::testing::write_minari(dir, lengths, terminated);
}

std::vector<std::string> minari_seeds(const std::string& work) {
  std::vector<std::string> seeds;
  for (const auto& lengths : std::vector<std::vector<int>>{{3, 2}, {2, 4, 1}}) {
    const fs::path dir = fs::path(work) / "seed-minari";
    write_minari(dir, lengths);
    seeds.push_back(read_text(dir / "data" / "main_data.hdf5"));
  }
  return seeds;
}

// The dataset folder the Minari targets read: data/main_data.hdf5 and data/metadata.json.
fs::path minari_dir(const std::string& work) {
  const fs::path dir = fs::path(work) / "input-minari";
  if (!fs::exists(dir / "data" / "metadata.json")) write_minari(dir, {3, 2});
  return dir;
}

void minari_run(const std::string& input, const std::string& work, std::string* must_name) {
  const fs::path dir = minari_dir(work);
  write_text(dir / "data" / "main_data.hdf5", input);
  *must_name = dir.string();
  (void)data::load_dataset(dir.string());
}

std::vector<std::string> minari_metadata_seeds(const std::string& work) {
  return {read_text(minari_dir(work) / "data" / "metadata.json"), "{}",
          R"({"env_spec": {"id": "x"}})"};
}

void minari_metadata_run(const std::string& input, const std::string& work,
                         std::string* must_name) {
  const fs::path dir = minari_dir(work);
  write_text(dir / "data" / "metadata.json", input);
  *must_name = dir.string();
  (void)data::load_dataset(dir.string());
}

// --- YAML: configs and sweeps -------------------------------------------------------------------

const std::vector<std::string> kYamlWords = {": ",
                                             "- ",
                                             "\n",
                                             "\n  ",
                                             "[",
                                             "]",
                                             "{",
                                             "}",
                                             ",",
                                             "&a ",
                                             "*a",
                                             "!!str ",
                                             "!!int ",
                                             "!!map ",
                                             "<<: ",
                                             "---\n",
                                             "...\n",
                                             "? ",
                                             "|\n  ",
                                             ">\n  ",
                                             "\"",
                                             "'",
                                             "#",
                                             "~",
                                             "null",
                                             "true",
                                             "1e309",
                                             "-1",
                                             "0",
                                             "9223372036854775807",
                                             "99999999999999999999",
                                             "0x1f",
                                             ".nan",
                                             ".inf",
                                             "\t",
                                             "\\u0000"};

std::vector<std::string> with_yaml_words(std::vector<std::string> keys) {
  for (auto& k : keys) k += ": ";
  keys.insert(keys.end(), kYamlWords.begin(), kYamlWords.end());
  return keys;
}

std::vector<std::string> config_seeds(const std::string&) {
  return files_in(fs::path(minrnn::testing::source_dir()) / "configs", ".yaml");
}

void config_run(const std::string& input, const std::string& work, std::string* must_name) {
  const std::string where = work + "/input-config.yaml";
  *must_name = where;
  // `defaults:` resolves against configs/, where the seeds' defaults.yaml lives.
  (void)rl::parse_config(input, where, minrnn::testing::source_dir() + "/configs");
}

std::vector<std::string> sweep_seeds(const std::string&) {
  return files_in(fs::path(minrnn::testing::source_dir()) / "configs" / "sweeps", ".yaml");
}

void sweep_run(const std::string& input, const std::string& work, std::string* must_name) {
  const std::string where = work + "/input-sweep.yaml";
  *must_name = where;
  (void)sweep::parse_sweep(input, where);
}

// --- checkpoint.pt -------------------------------------------------------------------------

std::vector<std::string> checkpoint_seeds(const std::string& work) {
  const std::string dataset = work + "/ckpt-data.hdf5";
  data::D4rlWriteOptions o;
  o.overwrite = true;
  data::write_d4rl(dataset, data::testing::make_data(11, 3, {6, 8, 5}), o);
  std::vector<std::string> seeds;
  for (const char* backbone : {"mingru", "transformer"}) {
    const fs::path run = fs::path(work) / (std::string("ckpt-run-") + backbone);
    rl::TrainOptions opt;
    opt.run_dir = run.string();
    opt.quiet = true;
    opt.force = true;
    const rl::TrainConfig cfg =
        rl::parse_config("", "fuzz seed", ".",
                         {"dataset=" + dataset, "env=hopper", std::string("backbone=") + backbone,
                          "n_layers=1", "embed_dim=8", "n_heads=1", "context_len=3", "batch_size=2",
                          "max_steps=1", "checkpoint_every=1", "eval_every=0"});
    rl::train(cfg, opt);
    seeds.push_back(read_text(run / "checkpoint.pt"));
  }
  return seeds;
}

// A little-endian field of a zip record; the callers check that it lies in `zip`.
uint64_t field(const std::string& zip, uint64_t at, int bytes) {
  uint64_t value = 0;
  for (int i = bytes - 1; i >= 0; --i) value = value << 8 | static_cast<unsigned char>(zip[at + i]);
  return value;
}

void put_crc(std::string& zip, uint64_t at, uint32_t crc) {
  for (int i = 0; i < 4; ++i) zip[at + i] = static_cast<char>(crc >> (8 * i));
}

// Sets every stored entry's CRC-32 — in the central directory, the local header and a data
// descriptor — to that of the bytes the entry now holds, as far as the records can be followed.
// The directory is found as rl::why_not_whole_archive finds it: the zip64 end record LibTorch
// writes (its locator the 20 bytes before the end record), else the end record.
void rewrite_crcs(std::string& zip) {
  const uint64_t n = zip.size();
  if (n < 22) return;
  uint64_t end = n - 22;
  while (field(zip, end, 4) != 0x06054b50)
    if (end-- == 0 || n - end > 22 + 65535) return;
  uint64_t dir = field(zip, end + 16, 4), dir_size = field(zip, end + 12, 4);
  if (end >= 20 && field(zip, end - 20, 4) == 0x07064b50) {
    const uint64_t at = field(zip, end - 20 + 8, 8);
    if (n >= 56 && at <= n - 56 && field(zip, at, 4) == 0x06064b50)
      dir = field(zip, at + 48, 8), dir_size = field(zip, at + 40, 8);
  }
  for (uint64_t at = dir; at + 46 <= n && at - dir < dir_size && field(zip, at, 4) == 0x02014b50;
       at += 46 + field(zip, at + 28, 2) + field(zip, at + 30, 2) + field(zip, at + 32, 2)) {
    const uint64_t size = field(zip, at + 20, 4), local = field(zip, at + 42, 4);
    if (field(zip, at + 10, 2) != 0 || local + 30 > n || field(zip, local, 4) != 0x04034b50)
      continue;  // compressed, or no header where the directory says
    const uint64_t data = local + 30 + field(zip, local + 26, 2) + field(zip, local + 28, 2);
    if (data > n || size > n - data) continue;
    const auto crc = static_cast<uint32_t>(
        crc32(0L, reinterpret_cast<const Bytef*>(zip.data() + data), static_cast<uInt>(size)));
    put_crc(zip, at + 16, crc);
    put_crc(zip, local + 14, crc);
    const uint64_t after = data + size;
    if ((field(zip, local + 6, 2) & 8) != 0 && after + 8 <= n)  // a data descriptor follows
      put_crc(zip, after + (field(zip, after, 4) == 0x08074b50 ? 4 : 0), crc);
  }
}

// A mutated byte inside an entry fails its CRC-32 (rl::why_not_whole_archive) before LibTorch's
// parser sees it, so nearly every input tested that one check. Three inputs in four (by their
// bytes' hash: the same input always alike) get their CRCs rewritten to match and reach the
// parser; the fourth keeps what the mutation left, for the check itself.
void checkpoint_run(const std::string& mutated, const std::string& work, std::string* must_name) {
  std::string input = mutated;
  if (std::hash<std::string>{}(input) % 4 != 0) rewrite_crcs(input);
  const std::string path = work + "/input-checkpoint.pt";
  write_text(path, input);
  *must_name = path;
  (void)rl::load_agent(path, torch::kCPU);
}

}  // namespace

const std::vector<Target>& targets() {
  static const std::vector<Target> all = {
      {"d4rl", "a D4RL-layout .hdf5 file, read by load_dataset", false, {}, d4rl_seeds, d4rl_run},
      {"minari",
       "a Minari dataset's data/main_data.hdf5, read by load_dataset",
       false,
       {},
       minari_seeds,
       minari_run},
      {"minari-metadata",
       "a Minari dataset's metadata.json, read by load_dataset",
       true,
       {"\"dataset_id\": ", "\"env_spec\": ", "\"id\": ", "\"ref_min_score\": ",
        "\"ref_max_score\": ", "\"total_episodes\": ", "{", "}", "[", "]", ",", "\"", "\\\"",
        "null", "1e999", "-0"},
       minari_metadata_seeds,
       minari_metadata_run},
      {"config", "a training config (YAML), read by parse_config", true,
       with_yaml_words(rl::config_keys()), config_seeds, config_run},
      {"sweep", "a sweep file (YAML), read by parse_sweep", true,
       with_yaml_words({"datasets", "backbones", "seeds", "config", "set", "out", "parallel",
                        "threads", "eval_episodes"}),
       sweep_seeds, sweep_run},
      {"checkpoint",
       "a checkpoint.pt, read by load_agent",
       false,
       {},
       checkpoint_seeds,
       checkpoint_run},
  };
  return all;
}

}  // namespace minrnn::fuzz
