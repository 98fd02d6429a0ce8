#include <gtest/gtest.h>
#include <zlib.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <tuple>

#include "envs/image_io.h"
#include "envs/locomotion.h"
#include "envs/registry.h"
#include "envs/render.h"

namespace minrnn::envs {
namespace {

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

uint32_t be32(const std::vector<uint8_t>& b, size_t at) {
  return (uint32_t{b[at]} << 24) | (uint32_t{b[at + 1]} << 16) | (uint32_t{b[at + 2]} << 8) |
         b[at + 3];
}

bool file_exists(const std::string& path) {
  return access(path.c_str(), F_OK) == 0;
}

std::string temp_dir(const std::string& name) {
  // mkdtemp, not std::filesystem: libtorch.so interposes broken std::filesystem symbols.
  std::string pattern = "/tmp/minrnn_test_envs_" + name + "_XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  return pattern;
}

TEST(ImageIo, PngRoundTripsThroughZlib) {
  const int w = 5, h = 3;
  std::vector<uint8_t> rgb(w * h * 3);
  for (size_t i = 0; i < rgb.size(); ++i) rgb[i] = static_cast<uint8_t>(i * 7);
  const std::string path = temp_dir("png") + "/x.png";
  write_png(path, rgb, w, h);
  const auto png = read_bytes(path);
  ASSERT_GT(png.size(), 8u + 25 + 12);
  EXPECT_EQ(std::vector<uint8_t>(png.begin(), png.begin() + 8),
            (std::vector<uint8_t>{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}));
  EXPECT_EQ(be32(png, 16), static_cast<uint32_t>(w));
  EXPECT_EQ(be32(png, 20), static_cast<uint32_t>(h));
  // The writer's text chunk after the header (written_by_minrnn), then the pixels.
  const size_t text = 8 + 25;  // signature + IHDR chunk
  ASSERT_EQ(std::string(png.begin() + text + 4, png.begin() + text + 23),
            std::string("tEXtSoftware\0minrnn", 19));
  const size_t idat = text + 12 + 15;
  ASSERT_EQ(std::string(png.begin() + idat + 4, png.begin() + idat + 8), "IDAT");
  const uint32_t len = be32(png, idat);
  std::vector<uint8_t> raw((w * 3 + 1) * h);
  uLongf raw_len = raw.size();
  ASSERT_EQ(uncompress(raw.data(), &raw_len, png.data() + idat + 8, len), Z_OK);
  ASSERT_EQ(raw_len, raw.size());
  for (int y = 0; y < h; ++y) {
    EXPECT_EQ(raw[y * (w * 3 + 1)], 0);  // filter type none
    for (int x = 0; x < w * 3; ++x) EXPECT_EQ(raw[y * (w * 3 + 1) + 1 + x], rgb[y * w * 3 + x]);
  }
  EXPECT_FALSE(file_exists(path + ".tmp"));
  EXPECT_THROW(write_png(path, rgb, w + 1, h), std::invalid_argument);
  EXPECT_THROW(write_png("/nonexistent_dir/x.png", rgb, w, h), std::runtime_error);
}

TEST(ImageIo, GifHasHeaderFramesAndTrailer) {
  const int w = 40, h = 30;
  std::vector<std::vector<uint8_t>> frames(3, std::vector<uint8_t>(w * h * 3));
  for (size_t f = 0; f < frames.size(); ++f) {
    for (size_t i = 0; i < frames[f].size(); ++i) frames[f][i] = static_cast<uint8_t>(i * 13 + f);
  }
  const std::string path = temp_dir("gif") + "/x.gif";
  write_gif(path, frames, w, h, 5);
  const auto gif = read_bytes(path);
  ASSERT_GT(gif.size(), 13u + 768);
  EXPECT_EQ(std::string(gif.begin(), gif.begin() + 6), "GIF89a");
  EXPECT_EQ(gif[6] | (gif[7] << 8), w);
  EXPECT_EQ(gif[8] | (gif[9] << 8), h);
  EXPECT_EQ(gif.back(), 0x3b);
  EXPECT_THROW(write_gif(path, {}, w, h), std::invalid_argument);
}

// A rollout's GIF plays in real time: hopper's and walker2d's 8 ms steps (a 0.8 cs delay browsers
// would show at 10 cs) every 5th at 4 cs, halfcheetah's 50 ms steps each at 5 cs.
TEST(ImageIo, AGifOfEnvStepsPlaysInRealTime) {
  for (const auto& [dt, stride, delay] : {std::tuple{0.008, 5, 4}, std::tuple{0.05, 1, 5},
                                          std::tuple{0.002, 10, 2}, std::tuple{0.03, 1, 3}}) {
    const GifTiming t = real_time_gif(dt);
    EXPECT_EQ(t.stride, stride) << dt;
    EXPECT_EQ(t.delay_centiseconds, delay) << dt;
  }
  EXPECT_EQ(real_time_gif(envs::env_spec("hopper").dt).stride, 5);
}

TEST(Render, RendersTheCurrentStateOffscreen) {
  LocomotionEnv env("hopper", 0);
  std::unique_ptr<Renderer> renderer;
  try {
    renderer = std::make_unique<Renderer>(env, 96, 64);
  } catch (const std::runtime_error& e) {
    if (std::string(e.what()).find("no OSMesa") != std::string::npos) GTEST_SKIP() << e.what();
    FAIL() << e.what();
  }
  const auto first = renderer->render_rgb();
  ASSERT_EQ(first.size(), 96u * 64 * 3);
  size_t distinct = 0;
  for (size_t i = 3; i < first.size(); i += 3) distinct += first[i] != first[0];
  EXPECT_GT(distinct, first.size() / 30) << "image is (nearly) uniform";
  EXPECT_EQ(renderer->render_rgb(), first);  // same state, same pixels
  // Tilt the hopper: the tracking camera sees a different picture.
  env.set_state({0, 1.0, 0.6, -0.5, -0.5, 0.3}, std::vector<double>(6, 0.0));
  EXPECT_NE(renderer->render_rgb(), first);
  EXPECT_THROW(Renderer(env, 4000, 10), std::invalid_argument);
  EXPECT_THROW(Renderer(env, 10, 10, "nope"), std::invalid_argument);

  RolloutVideo video;
  video.dir = temp_dir("rollout") + "/nested/frames";
  video.gif_path = video.dir + "/rollout.gif";
  video.width = 64;
  video.height = 48;
  video.steps = 5;
  const int frames = render_random_rollout(env, video);
  EXPECT_GE(frames, 2);
  EXPECT_TRUE(file_exists(video.dir + "/frame_00000.png"));
  EXPECT_TRUE(file_exists(video.gif_path));
  // Each carries its writer's tag (what a video folder may replace); another's image does not.
  EXPECT_TRUE(written_by_minrnn(video.dir + "/frame_00000.png"));
  EXPECT_TRUE(written_by_minrnn(video.gif_path));
  const std::string foreign = video.dir + "/foreign.gif";
  std::ofstream(foreign, std::ios::binary) << "GIF89a\x01\x00\x01\x00\x00\x00\x00;";
  EXPECT_FALSE(written_by_minrnn(foreign));
  EXPECT_FALSE(written_by_minrnn(video.dir + "/missing.png"));
  ASSERT_EQ(::mkfifo((video.dir + "/frame_00009.png").c_str(), 0600), 0);
  EXPECT_FALSE(written_by_minrnn(video.dir + "/frame_00009.png"));  // not opened: it would wait
}

}  // namespace
}  // namespace minrnn::envs
