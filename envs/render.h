// Offscreen rendering of an environment's current state through MuJoCo's renderer on an OSMesa
// (software) GL context, so it works headless. One Renderer per thread; it borrows the env,
// which must outlive it.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "envs/env.h"

namespace minrnn::envs {

class Renderer {
 public:
  // camera: a named camera of the model ("track" follows the body), or "" for a free camera.
  // Throws std::runtime_error when no GL context can be made (or this build has no OSMesa), and
  // std::invalid_argument for a size beyond the model's offscreen buffer (1920x1080) or an env
  // that is not MuJoCo-backed.
  Renderer(const Env& env, int width, int height, const std::string& camera = "track");
  ~Renderer();
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;

  int width() const { return width_; }
  int height() const { return height_; }
  // The env's current state as height rows of width*3 RGB bytes, top row first.
  std::vector<uint8_t> render_rgb();

 private:
  struct Gl;  // OSMesa + MuJoCo visualization state
  int width_, height_;
  std::unique_ptr<Gl> gl_;
};

// A rollout video of uniform random actions from reset(seed): up to `steps` steps (stopping at
// episode end), frame_00000.png, ... written into `dir` (created) and, if gif_path is not empty,
// an animated GIF. Returns the number of frames written. Policies render the same way by calling
// Renderer::render_rgb after each step.
struct RolloutVideo {
  std::string dir;
  std::string gif_path;
  int width = 480;
  int height = 360;
  int steps = 200;
  int64_t seed = 0;
};
int render_random_rollout(Env& env, const RolloutVideo& video);

}  // namespace minrnn::envs
