#include "envs/render.h"

#include <mujoco/mujoco.h>

#include <cstdio>
#include <stdexcept>

#include "envs/image_io.h"
#include "envs/locomotion.h"
#include "envs/rng.h"

#ifdef MINRNN_HAVE_OSMESA
#include <GL/osmesa.h>
#endif

namespace minrnn::envs {

namespace {
const LocomotionEnv& mujoco_env(const Env& env) {
  const auto* mj = dynamic_cast<const LocomotionEnv*>(&env);
  if (mj == nullptr) {
    throw std::invalid_argument("Renderer: environment '" + env.spec().name +
                                "' is not MuJoCo-backed (LocomotionEnv)");
  }
  return *mj;
}
}  // namespace

#ifdef MINRNN_HAVE_OSMESA

struct Renderer::Gl {
  const LocomotionEnv* env = nullptr;
  OSMesaContext context = nullptr;
  std::vector<uint8_t> window;  // OSMesa's default framebuffer; MuJoCo draws to its own FBO
  mjvScene scene;
  mjvCamera camera;
  mjvOption option;
  mjrContext render_context;
  bool scene_made = false, context_made = false;

  ~Gl() {
    if (context_made) {
      OSMesaMakeCurrent(context, window.data(), GL_UNSIGNED_BYTE, 1, 1);
      mjr_freeContext(&render_context);
    }
    if (scene_made) mjv_freeScene(&scene);
    if (context != nullptr) OSMesaDestroyContext(context);
  }

  void make_current(int width, int height) {
    if (!OSMesaMakeCurrent(context, window.data(), GL_UNSIGNED_BYTE, width, height)) {
      throw std::runtime_error("Renderer: OSMesaMakeCurrent failed");
    }
  }
};

Renderer::Renderer(const Env& env, int width, int height, const std::string& camera)
    : width_(width), height_(height), gl_(std::make_unique<Gl>()) {
  const LocomotionEnv& mj = mujoco_env(env);
  const mjModel* m = mj.model();
  if (width < 1 || height < 1 || width > m->vis.global.offwidth ||
      height > m->vis.global.offheight) {
    throw std::invalid_argument("Renderer: size " + std::to_string(width) + "x" +
                                std::to_string(height) + " outside 1x1 .. " +
                                std::to_string(m->vis.global.offwidth) + "x" +
                                std::to_string(m->vis.global.offheight));
  }
  gl_->env = &mj;
  gl_->context = OSMesaCreateContextExt(OSMESA_RGBA, 24, 8, 0, nullptr);
  if (gl_->context == nullptr) {
    throw std::runtime_error("Renderer: could not create an OSMesa GL context");
  }
  gl_->window.assign(static_cast<size_t>(width) * height * 4, 0);
  gl_->make_current(width, height);

  mjv_defaultCamera(&gl_->camera);
  mjv_defaultOption(&gl_->option);
  mjv_defaultScene(&gl_->scene);
  mjr_defaultContext(&gl_->render_context);
  mjv_makeScene(m, &gl_->scene, 1000);
  gl_->scene_made = true;
  mjr_makeContext(m, &gl_->render_context, mjFONTSCALE_100);
  gl_->context_made = true;
  if (gl_->render_context.offFBO == 0) {
    throw std::runtime_error("Renderer: MuJoCo could not create its offscreen framebuffer");
  }
  mjr_setBuffer(mjFB_OFFSCREEN, &gl_->render_context);
  if (!camera.empty()) {
    const int id = mj_name2id(m, mjOBJ_CAMERA, camera.c_str());
    if (id < 0) {
      throw std::invalid_argument("Renderer: model '" + env.spec().name + "' has no camera '" +
                                  camera + "'");
    }
    gl_->camera.type = mjCAMERA_FIXED;
    gl_->camera.fixedcamid = id;
  }
}

Renderer::~Renderer() = default;

std::vector<uint8_t> Renderer::render_rgb() {
  gl_->make_current(width_, height_);
  const mjModel* m = gl_->env->model();
  // mjv_updateScene only reads the physics state; its signature is not const.
  auto* d = const_cast<mjData*>(gl_->env->data());
  mjv_updateScene(m, d, &gl_->option, nullptr, &gl_->camera, mjCAT_ALL, &gl_->scene);
  mjr_setBuffer(mjFB_OFFSCREEN, &gl_->render_context);
  const mjrRect viewport = {0, 0, width_, height_};
  mjr_render(viewport, &gl_->scene, &gl_->render_context);
  std::vector<uint8_t> bottom_up(static_cast<size_t>(width_) * height_ * 3);
  mjr_readPixels(bottom_up.data(), nullptr, viewport, &gl_->render_context);
  // OpenGL rows start at the bottom; images start at the top.
  std::vector<uint8_t> rgb(bottom_up.size());
  const size_t row = static_cast<size_t>(width_) * 3;
  for (int y = 0; y < height_; ++y) {
    std::copy(bottom_up.begin() + (height_ - 1 - y) * row, bottom_up.begin() + (height_ - y) * row,
              rgb.begin() + y * row);
  }
  return rgb;
}

#else  // no OSMesa at build time

struct Renderer::Gl {};

Renderer::Renderer(const Env& env, int width, int height, const std::string&)
    : width_(width), height_(height) {
  mujoco_env(env);
  throw std::runtime_error(
      "Renderer: this build has no OSMesa GL context (install libosmesa6-dev and reconfigure)");
}
Renderer::~Renderer() = default;
std::vector<uint8_t> Renderer::render_rgb() {
  return {};
}

#endif

int render_random_rollout(Env& env, const RolloutVideo& video) {
  if (video.steps < 0) throw std::invalid_argument("render_random_rollout: steps must be >= 0");
  Renderer renderer(env, video.width, video.height);
  make_directories(video.dir);
  Rng actions(static_cast<uint64_t>(video.seed) + 1);
  env.reset(video.seed);
  std::vector<std::vector<uint8_t>> frames;
  auto save = [&] {
    char name[32];
    std::snprintf(name, sizeof(name), "frame_%05d.png", static_cast<int>(frames.size()));
    frames.push_back(renderer.render_rgb());
    write_png(video.dir + "/" + name, frames.back(), video.width, video.height);
  };
  save();
  for (int t = 0; t < video.steps; ++t) {
    std::vector<double> a(env.spec().act_dim);
    for (double& x : a) x = actions.uniform(-1, 1);
    const StepResult r = env.step(a);
    save();
    if (r.terminated || r.truncated) break;
  }
  if (!video.gif_path.empty()) {
    const GifTiming timing = real_time_gif(env.spec().dt);
    std::vector<std::vector<uint8_t>> shown;
    for (size_t f = 0; f < frames.size(); f += timing.stride) shown.push_back(frames[f]);
    write_gif(video.gif_path, shown, video.width, video.height, timing.delay_centiseconds);
  }
  return static_cast<int>(frames.size());
}

}  // namespace minrnn::envs
