// Writing rendered frames: PNG (zlib) and animated GIF (our own LZW encoder, fixed 6x6x6 colour
// cube). Both write to a temporary file and rename, so a failed write leaves no partial output.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace minrnn::envs {

// mkdir -p.
void make_directories(const std::string& dir);

// rgb: height rows of width*3 bytes, top row first.
void write_png(const std::string& path, const std::vector<uint8_t>& rgb, int width, int height);

// Every frame is width*height*3 bytes; delay between frames in 1/100 s; loops forever.
void write_gif(const std::string& path, const std::vector<std::vector<uint8_t>>& frames, int width,
               int height, int delay_centiseconds = 4);

// Whether the file at `path` is a PNG or GIF these writers wrote (the writer's tag each carries:
// a PNG text chunk "Software: minrnn", a GIF comment "minrnn"): what a video folder may replace,
// where a user's own image of the same name is kept. False for anything but a regular file.
bool written_by_minrnn(const std::string& path);

// A GIF of an env's steps in real time: every `stride`-th frame shown `delay_centiseconds`.
// Browsers show a delay under 2 cs as 10 cs, so an env of dt 0.008 s (hopper, walker2d) keeps
// every 5th frame at 4 cs; one of 0.05 s (halfcheetah) every frame at 5 cs.
struct GifTiming {
  int stride = 1;
  int delay_centiseconds = 4;
};
GifTiming real_time_gif(double step_seconds);

}  // namespace minrnn::envs
