// Bad input: each case must raise an exception naming the file and the key, and write nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "datasets/d4rl.h"
#include "datasets/episodes.h"
#include "tests/datasets/fixtures.h"
#include "tests/paths.h"

namespace minrnn::data {
namespace {

using testing::put_dataset;
using testing::TempDir;
using testing::write_raw_d4rl;

// Expects read_d4rl(path) to throw E whose message contains every one of `parts`.
template <typename E = std::invalid_argument>
void expect_read_error(const std::string& path, std::vector<std::string> parts,
                       const ReadOptions& options = {}) {
  try {
    read_d4rl(path, options);
    FAIL() << "no error reading " << path;
  } catch (const E& e) {
    for (const auto& part : parts)
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "message '" << e.what() << "' lacks '" << part << "'";
  }
}

TEST(ErrorsTest, ValidRawFileReads) {  // the baseline the other cases break
  TempDir dir;
  write_raw_d4rl(dir.file("x.hdf5"), 6, 3, 2);
  Transitions d = read_d4rl(dir.file("x.hdf5"));
  EXPECT_EQ(d.num_steps(), 6);
  EXPECT_EQ(d.timeouts[5], 1);
}

TEST(ErrorsTest, MissingKey) {
  TempDir dir;
  std::string path = dir.file("x.hdf5");
  write_raw_d4rl(path, 6, 3, 2, {"actions"});
  // What the file holds instead is said, so a misnamed key shows itself.
  expect_read_error(path, {path, "'actions': key is missing (the file holds: ", "observations"});
  write_raw_d4rl(path, 6, 3, 2, {"timeouts"});
  expect_read_error(path, {path, "'timeouts'", "missing"});
}

TEST(ErrorsTest, WrongRank) {
  TempDir dir;
  std::string path = dir.file("x.hdf5");
  write_raw_d4rl(path, 6, 3, 2);
  std::vector<float> flat(6, 0.0f);
  put_dataset(path, "observations", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {6}, flat.data());
  expect_read_error(path, {path, "'observations'", "shape (6,)", "(N, dim)"});
}

TEST(ErrorsTest, RewardsMayBeAColumnButNotAMatrix) {
  TempDir dir;
  std::string path = dir.file("x.hdf5");
  write_raw_d4rl(path, 4, 3, 2);
  std::vector<double> r(8, 2.0);
  put_dataset(path, "rewards", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {4, 1}, r.data());
  EXPECT_EQ(read_d4rl(path).rewards, std::vector<float>(4, 2.0f));  // (N, 1) float64: accepted
  put_dataset(path, "rewards", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {4, 2}, r.data());
  expect_read_error(path, {path, "'rewards'", "(4, 2)"});
}

TEST(ErrorsTest, WrongDtype) {
  TempDir dir;
  std::string path = dir.file("x.hdf5");
  write_raw_d4rl(path, 4, 3, 2);
  std::vector<int32_t> ints(8, 1);
  put_dataset(path, "actions", H5T_STD_I32LE, H5T_NATIVE_INT32, {4, 2}, ints.data());
  expect_read_error(path, {path, "'actions'", "float"});

  write_raw_d4rl(path, 4, 3, 2);
  std::vector<char> strings(4, 'x');
  hid_t string_type = H5Tcopy(H5T_C_S1);
  put_dataset(path, "terminals", string_type, string_type, {4}, strings.data());
  H5Tclose(string_type);
  expect_read_error(path, {path, "'terminals'", "bool"});
}

TEST(ErrorsTest, FloatFlagsMustBeExactlyZeroOrOne) {
  // Older D4RL sets and many conversions store terminals/timeouts as float 0.0/1.0.
  TempDir dir;
  std::string path = dir.file("x.hdf5");
  write_raw_d4rl(path, 4, 3, 2);
  std::vector<float> ok{0.0f, 1.0f, 0.0f, 0.0f};
  put_dataset(path, "terminals", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {4}, ok.data());
  std::vector<double> timeouts{0.0, 0.0, 0.0, 1.0};
  put_dataset(path, "timeouts", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {4}, timeouts.data());
  const Transitions d = read_d4rl(path);
  EXPECT_EQ(d.terminals, (std::vector<uint8_t>{0, 1, 0, 0}));
  EXPECT_EQ(d.timeouts, (std::vector<uint8_t>{0, 0, 0, 1}));
  for (float bad : {0.5f, 2.0f, -1.0f, std::nanf("")}) {
    std::vector<float> flags{0.0f, 1.0f, bad, 0.0f};
    put_dataset(path, "timeouts", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {4}, flags.data());
    expect_read_error(path, {path, "'timeouts'", "at row 2", "is not 0/1"});
  }
}

TEST(ErrorsTest, IntegerFlagsMustBeZeroOrOne) {
  TempDir dir;
  std::string path = dir.file("x.hdf5");
  write_raw_d4rl(path, 4, 3, 2);
  std::vector<uint8_t> ok{0, 1, 0, 1}, bad{0, 1, 0, 2};
  put_dataset(path, "terminals", H5T_STD_U8LE, H5T_NATIVE_UINT8, {4}, ok.data());
  EXPECT_EQ(read_d4rl(path).terminals, ok);  // numeric 0/1 flags are accepted
  put_dataset(path, "terminals", H5T_STD_U8LE, H5T_NATIVE_UINT8, {4}, bad.data());
  expect_read_error(path, {path, "'terminals'", "value 2 at row 3"});
}

TEST(ErrorsTest, LengthMismatchBetweenKeys) {
  TempDir dir;
  std::string path = dir.file("x.hdf5");
  write_raw_d4rl(path, 6, 3, 2);
  std::vector<float> r(5, 1.0f);
  put_dataset(path, "rewards", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {5}, r.data());
  expect_read_error(path, {path, "'rewards' has 5 rows", "'observations' has 6"});
}

TEST(ErrorsTest, NonFiniteValues) {
  TempDir dir;
  std::string path = dir.file("x.hdf5");
  write_raw_d4rl(path, 5, 3, 2);
  for (float bad : {std::nanf(""), INFINITY, -INFINITY}) {
    std::vector<float> obs(15, 0.0f);
    obs[3 * 3 + 1] = bad;
    put_dataset(path, "observations", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {5, 3}, obs.data());
    expect_read_error(path, {path, "'observations'", "non-finite", "row 3"});
  }
}

TEST(ErrorsTest, EmptyDataset) {
  TempDir dir;
  std::string path = dir.file("x.hdf5");
  write_raw_d4rl(path, 0, 3, 2);
  expect_read_error(path, {path, "empty dataset"});
  Transitions empty;
  empty.obs_dim = 3;
  empty.act_dim = 2;
  EXPECT_THROW(write_d4rl(dir.file("y.hdf5"), empty), std::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists(dir.file("y.hdf5")));
}

TEST(ErrorsTest, TruncatedFile) {
  TempDir dir;
  std::string path = dir.file("x.hdf5");
  write_d4rl(path, testing::make_data(5, 2, {300, 300}));
  auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size / 2);
  // Both sizes, from the superblock: how much a cut-short download is missing.
  expect_read_error<std::runtime_error>(
      path, {path, "truncated: it holds " + std::to_string(size / 2) + " bytes of the " +
                       std::to_string(size)});
}

TEST(ErrorsTest, DamagedSuperblock) {
  TempDir dir;
  std::string path = dir.file("x.hdf5");
  write_d4rl(path, testing::make_data(5, 2, {300, 300}));
  {  // HDF5's signature (the first 8 bytes) kept, the superblock's fields after it broken
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(8);
    const std::string junk(64, '\xff');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  expect_read_error<std::runtime_error>(path, {path, "cannot open as HDF5 (HDF5: ", "corrupt"});
}

TEST(ErrorsTest, CorruptCompressedData) {
  TempDir dir;
  std::string path = dir.file("x.hdf5");
  write_d4rl(path, testing::make_data(5, 2, {3000, 3000}));
  auto size = std::filesystem::file_size(path);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 4));
    std::string junk(size / 4, '\x5a');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  try {
    read_d4rl(path);
    FAIL() << "corrupt file read without error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    // HDF5's own reason, not a guess.
    EXPECT_NE(std::string(e.what()).find("(HDF5: "), std::string::npos) << e.what();
  }
}

// A file whose chunks use a filter this HDF5 lacks (h5py's LZF to a plain libhdf5) is said to be
// one, not "a corrupt file?" (a walk, 2026-11-30): a filter of the testing range is registered to
// write the file and gone when it is read.
TEST(ErrorsTest, AFilterThisBuildCannotDecodeIsNamed) {
  TempDir dir;
  const std::string path = dir.file("x.hdf5");
  write_raw_d4rl(path, 4, 3, 2);
  constexpr H5Z_filter_t kFilter = 305;
  const H5Z_class2_t passthrough = {
      H5Z_CLASS_T_VERS,
      kFilter,
      1,
      1,
      "test-only",
      nullptr,
      nullptr,
      [](unsigned, size_t, const unsigned[], size_t bytes, size_t*, void**) { return bytes; }};
  ASSERT_GE(H5Zregister(&passthrough), 0);
  struct Registered {  // gone for the read, and for later tests whatever the writing asserts
    bool held = true;
    void release() {
      if (held) H5Zunregister(kFilter);
      held = false;
    }
    ~Registered() { release(); }
  } registered;
  {
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    H5Ldelete(file, "observations", H5P_DEFAULT);
    const hsize_t dims[2] = {4, 3};
    const hid_t space = H5Screate_simple(2, dims, nullptr), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, dims);
    H5Pset_filter(dcpl, kFilter, H5Z_FLAG_MANDATORY, 0, nullptr);
    const hid_t dset =
        H5Dcreate2(file, "observations", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    const std::vector<float> values(12, 0.5f);
    ASSERT_GE(H5Dwrite(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
    H5Dclose(dset);
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Fclose(file);
  }
  registered.release();
  ASSERT_LE(H5Zfilter_avail(kFilter), 0);
  expect_read_error<std::runtime_error>(
      path, {path, "'observations': compressed with HDF5 filter 305 (test-only)",
             "not a corrupt file", "compression='gzip'"});
}

TEST(ErrorsTest, NotHdf5) {
  TempDir dir;
  std::string path = dir.file("notes.hdf5");
  std::ofstream(path) << "observations,actions\n1,2\n";
  expect_read_error(path, {path, "not an HDF5 file"});
  // What a dataset folder most often holds instead: an empty file, a Git LFS pointer.
  std::ofstream(dir.file("empty.hdf5")).flush();
  expect_read_error(dir.file("empty.hdf5"), {"not an HDF5 file (it is empty: 0 bytes)"});
  std::ofstream(dir.file("lfs.hdf5"))
      << "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a\nsize 12345\n";
  expect_read_error(dir.file("lfs.hdf5"), {"it is a Git LFS pointer", "git lfs pull"});
  expect_read_error<std::runtime_error>(dir.file("absent.hdf5"), {"absent.hdf5", "no such file"});
  // A typo of a file beside it: that file is offered; a folder is not a file.
  expect_read_error<std::runtime_error>(
      dir.file("notez.hdf5"), {"no such file (did you mean '" + dir.file("notes.hdf5") + "'?)"});
  expect_read_error<std::runtime_error>(dir.path.string(), {"not a file"});
}

TEST(ErrorsTest, DimsMustMatchTheEnvironment) {
  TempDir dir;
  std::string path = dir.file("hopper_medium-v2.hdf5");
  write_raw_d4rl(path, 4, 17, 6);  // walker2d's dims under a hopper name
  // The name's guess is load_dataset's to weigh against the file's own word and a config's env
  // (tests/rl/dataset_env_test.cpp); an env asked for is checked here.
  EXPECT_EQ(read_d4rl(path).obs_dim, 17);
  ReadOptions hopper;
  hopper.env = "hopper";
  expect_read_error(path, {path, "17/6", "hopper has 11/3"}, hopper);
  ReadOptions none;
  none.env = "none";
  EXPECT_EQ(read_d4rl(path, none).obs_dim, 17);
  ReadOptions walker;
  walker.env = "walker2d";
  EXPECT_EQ(read_d4rl(path, walker).obs_dim, 17);
  ReadOptions ant;
  ant.env = "ant";
  expect_read_error(path, {"unknown environment 'ant'", "known: halfcheetah, hopper, walker2d"},
                    ant);
  ReadOptions typo;
  typo.env = "hoper";
  expect_read_error(path, {"unknown environment 'hoper' (did you mean 'hopper'?)"}, typo);
}

TEST(ErrorsTest, NextObservationsShapeMustMatch) {
  TempDir dir;
  std::string path = dir.file("x.hdf5");
  write_raw_d4rl(path, 4, 3, 2);
  std::vector<float> v(8, 0.0f);
  put_dataset(path, "next_observations", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {4, 2}, v.data());
  expect_read_error(path, {path, "'next_observations'", "(4, 2)", "(4, 3)"});
}

// A file that crashes the HDF5 library itself (found by tests/fuzz: a segfault decoding a broken
// datatype message, before any check of ours can run) is read in a child process: an error naming
// the file, and this process carries on.
TEST(ErrorsTest, AFileThatCrashesHdf5IsAnError) {
  TempDir dir;
  const std::string path = dir.file("crash.hdf5");
  std::filesystem::copy_file(
      minrnn::testing::source_dir() + "/tests/fuzz/regressions/d4rl/hdf5-segv-in-H5T_copy.hdf5",
      path);
  try {
    read_d4rl(path);
    FAIL() << "read a file that crashes HDF5";
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("HDF5 library was killed by signal"), std::string::npos) << msg;
  }
  write_raw_d4rl(dir.file("after.hdf5"), 6, 3, 2);
  EXPECT_EQ(read_d4rl(dir.file("after.hdf5")).num_steps(), 6);  // and reading goes on
}

// Sizes in a header are checked against the file before anything is allocated for them.
TEST(ErrorsTest, AHeaderDeclaringMoreThanTheFileHoldsIsRefused) {
  TempDir dir;
  const std::string path = dir.file("huge.hdf5");
  {
    testing::RawFile f(path);
    // An unwritten dataset of 2^40 rows: HDF5 stores no values for it (it would return fill
    // values), so the file stays a few kB.
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    hsize_t dims[2] = {hsize_t{1} << 40, 11};
    hid_t space = H5Screate_simple(2, dims, nullptr);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hsize_t chunk[2] = {1024, 11};
    H5Pset_chunk(dcpl, 2, chunk);
    hid_t dset = H5Dcreate2(f.id(), "observations", H5T_IEEE_F32LE, space, lcpl, dcpl, H5P_DEFAULT);
    H5Dclose(dset);
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Pclose(lcpl);
  }
  try {
    read_d4rl(path);
    FAIL() << "read a file declaring 2^40 rows";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("more than the"), std::string::npos) << msg;
  }
}

TEST(ErrorsTest, WriterLeavesNothingBehindOnFailure) {
  TempDir dir;
  std::string path = dir.file("no_such_dir/x.hdf5");
  EXPECT_THROW(write_d4rl(path, testing::make_data(3, 2, {4})), std::runtime_error);
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  Transitions bad = testing::make_data(3, 2, {4});
  bad.actions.pop_back();
  try {
    write_d4rl(dir.file("y.hdf5"), bad);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'actions' has 7 values, expected 8"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path));
}

}  // namespace
}  // namespace minrnn::data
