// The choices' file of the tuned stacked products (ops/tuned_choice_file.h): what processes chose,
// kept for later ones, and a choice's text read back as it was written.
#include "ops/tuned_choice_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "io/atomic_file.h"
#include "tests/scoped_env.h"
#include "tests/temp_dir.h"
#include "tests/text_file.h"

namespace minrnn::core {
namespace {

// Choices kept across processes: a second file opened on the same path sees the first one's,
// two that add meanwhile both end up in the file, a key keeps its first choice.
TEST(TunedChoiceFile, KeepsEveryProcesssChoicesAndTheFirstOfEach) {
  const testing::TempDir dir;
  const std::string path = dir.file("cache/gpu.tsv");  // its folder made by the first add
  TunedChoiceFile first(path), second(path);
  EXPECT_EQ(first.find("1,2,3"), "");
  first.add("1,2,3", "libtorch");
  second.add("4,5,6", "cublaslt 00ff");
  second.add("1,2,3", "cublaslt 1234");
  const TunedChoiceFile later(path);
  EXPECT_EQ(later.find("1,2,3"), "libtorch");
  EXPECT_EQ(later.find("4,5,6"), "cublaslt 00ff");
  EXPECT_EQ(second.find("1,2,3"), "libtorch");  // what the file held when it added
  EXPECT_EQ(testing::read_text(path).find(".tmp"), std::string::npos);
}

TEST(TunedChoiceFile, ALineThatDoesNotParseIsSkipped) {
  const testing::TempDir dir;
  const std::string path = dir.file("gpu.tsv");
  io::write_file_atomically(path, "# header\n7,8\tlibtorch\nno tab here\n\tno key\n9,9\t\n");
  ::testing::internal::CaptureStderr();
  const TunedChoiceFile file(path);
  const std::string warned = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(file.find("7,8"), "libtorch");
  EXPECT_EQ(file.find("9,9"), "");
  EXPECT_NE(warned.find(path + " line 3"), std::string::npos) << warned;
  EXPECT_NE(warned.find(path + " line 5"), std::string::npos) << warned;
}

// MINRNN_TUNED_GEMM_FILE may name anything: a FIFO (or a folder) is not read (it would block the
// first product), said, and its shapes are timed again.
TEST(TunedChoiceFile, AFileThatIsNoTextFileIsNotRead) {
  const testing::TempDir dir;
  const std::string fifo = dir.file("gpu.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ::testing::internal::CaptureStderr();
  const TunedChoiceFile file(fifo);
  const std::string warned = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(file.find("1,2,3"), "");
  EXPECT_NE(warned.find(fifo + ": not a regular file"), std::string::npos) << warned;
  EXPECT_NE(warned.find("timed again"), std::string::npos) << warned;
}

TEST(TunedChoiceFile, AFileThatCannotBeWrittenIsNamed) {
  const testing::TempDir dir;
  io::write_file_atomically(dir.file("plain"), "a file where a folder should be");
  TunedChoiceFile file(dir.file("plain/gpu.tsv"));
  try {
    file.add("1", "libtorch");
    ADD_FAILURE() << "the add went through";
  } catch (const io::WriteError& e) {
    EXPECT_NE(std::string(e.what()).find(dir.file("plain/gpu.tsv")), std::string::npos) << e.what();
  }
  EXPECT_EQ(file.find("1"), "libtorch");  // still this process's choice
  TunedChoiceFile nowhere("");
  nowhere.add("1", "libtorch");
  EXPECT_EQ(nowhere.find("1"), "libtorch");
}

// A choice's text: LibTorch's path, or a cuBLASLt algorithm's words, back to the same words;
// anything else refused (a file edited by hand, cut short, another version's words).
TEST(TunedChoiceFile, AChoicesTextIsReadBackAsItWasWritten) {
  TunedChoice algo;
  for (int i = 0; i < TunedChoice::kAlgoWords; ++i) algo.algo[i] = 0x0123456789abcdefULL * (i + 1);
  const std::string text = choice_text(algo);
  const auto back = parse_choice(text);
  ASSERT_TRUE(back.has_value()) << text;
  EXPECT_FALSE(back->libtorch);
  for (int i = 0; i < TunedChoice::kAlgoWords; ++i) EXPECT_EQ(back->algo[i], algo.algo[i]);
  TunedChoice libtorch;
  libtorch.libtorch = true;
  ASSERT_TRUE(parse_choice(choice_text(libtorch)).has_value());
  EXPECT_TRUE(parse_choice("libtorch")->libtorch);
  std::string upper = text;
  upper.back() = 'F';
  for (const std::string& bad : {std::string(""), std::string("LibTorch"), text.substr(0, 40),
                                 text + "0", upper, "cublaslt" + text.substr(9)}) {
    EXPECT_FALSE(parse_choice(bad).has_value()) << bad;
  }
}

TEST(TunedChoiceFile, ItsPlaceFollowsTheEnvironment) {
  const std::string device = "NVIDIA H200 sm_90 cuBLASLt 130100";
  {
    const testing::ScopedEnv file("MINRNN_TUNED_GEMM_FILE", "/somewhere/choices.tsv");
    EXPECT_EQ(tuned_choice_path(device), "/somewhere/choices.tsv");
  }
  {
    const testing::ScopedEnv file("MINRNN_TUNED_GEMM_FILE", "off");
    EXPECT_EQ(tuned_choice_path(device), "");
  }
  const testing::ScopedEnv unset("MINRNN_TUNED_GEMM_FILE", "");
  const testing::ScopedEnv cache("XDG_CACHE_HOME", "/cache");
  EXPECT_EQ(tuned_choice_path(device),
            "/cache/minrnn/tuned-gemm/NVIDIA-H200-sm_90-cuBLASLt-130100.tsv");
}

}  // namespace
}  // namespace minrnn::core
