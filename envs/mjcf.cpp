#include "envs/mjcf.h"

#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>

namespace minrnn::envs {

namespace {

// Shared visual assets: they change nothing in the physics, only what the renderer draws.
// The offscreen buffer is sized for up to 1920x1080 frames.
const std::string kVisuals = R"(
  <visual><global offwidth="1920" offheight="1080"/><quality shadowsize="4096"/></visual>
  <asset>
    <texture type="skybox" builtin="gradient" rgb1=".4 .5 .6" rgb2="0 0 0" width="100" height="600"/>
    <texture name="texgeom" type="cube" builtin="flat" mark="cross" markrgb="1 1 1" rgb1=".8 .6 .4"
             rgb2=".8 .6 .4" width="127" height="762"/>
    <texture name="texplane" type="2d" builtin="checker" rgb1="0 0 0" rgb2=".8 .8 .8" width="100"
             height="100"/>
    <material name="MatPlane" texture="texplane" texrepeat="60 60" specular="1" shininess="1"
              reflectance="0.5"/>
    <material name="geom" texture="texgeom" texuniform="true"/>
  </asset>
)";

// HalfCheetah: gym's half_cheetah.xml was already in local coordinates and radians.
const std::string kHalfCheetahXml = std::string(R"(<mujoco model="halfcheetah">
  <compiler angle="radian" coordinate="local" inertiafromgeom="true" settotalmass="14"/>
  <default>
    <joint armature=".1" damping=".01" limited="true" solimplimit="0 .8 .03" solreflimit=".02 1"
           stiffness="8"/>
    <geom contype="1" conaffinity="0" condim="3" friction=".4 .1 .1" rgba=".8 .6 .4 1"
          solimp="0.0 0.8 0.01" solref="0.02 1"/>
    <motor ctrllimited="true" ctrlrange="-1 1"/>
  </default>
  <option gravity="0 0 -9.81" timestep="0.01"/>)") +
                                    kVisuals + R"(
  <worldbody>
    <light cutoff="100" diffuse="1 1 1" dir="-0 0 -1.3" directional="true" exponent="1"
           pos="0 0 1.3" specular=".1 .1 .1"/>
    <geom name="floor" type="plane" pos="0 0 0" size="40 40 40" conaffinity="1" condim="3"
          material="MatPlane" rgba=".8 .9 .8 1"/>
    <body name="torso" pos="0 0 .7">
      <camera name="track" mode="trackcom" pos="0 -3 0.3" xyaxes="1 0 0 0 0 1"/>
      <joint name="rootx" type="slide" axis="1 0 0" pos="0 0 0" armature="0" damping="0"
             stiffness="0" limited="false"/>
      <joint name="rootz" type="slide" axis="0 0 1" pos="0 0 0" armature="0" damping="0"
             stiffness="0" limited="false"/>
      <joint name="rooty" type="hinge" axis="0 1 0" pos="0 0 0" armature="0" damping="0"
             stiffness="0" limited="false"/>
      <geom name="torso" type="capsule" fromto="-.5 0 0 .5 0 0" size="0.046"/>
      <geom name="head" type="capsule" pos=".6 0 .1" axisangle="0 1 0 .87" size="0.046 .15"/>
      <body name="bthigh" pos="-.5 0 0">
        <joint name="bthigh" type="hinge" axis="0 1 0" pos="0 0 0" range="-.52 1.05"
               stiffness="240" damping="6"/>
        <geom name="bthigh" type="capsule" pos=".1 0 -.13" axisangle="0 1 0 -3.8"
              size="0.046 .145"/>
        <body name="bshin" pos=".16 0 -.25">
          <joint name="bshin" type="hinge" axis="0 1 0" pos="0 0 0" range="-.785 .785"
                 stiffness="180" damping="4.5"/>
          <geom name="bshin" type="capsule" pos="-.14 0 -.07" axisangle="0 1 0 -2.03"
                size="0.046 .15" rgba=".9 .6 .6 1"/>
          <body name="bfoot" pos="-.28 0 -.14">
            <joint name="bfoot" type="hinge" axis="0 1 0" pos="0 0 0" range="-.4 .785"
                   stiffness="120" damping="3"/>
            <geom name="bfoot" type="capsule" pos=".03 0 -.097" axisangle="0 1 0 -.27"
                  size="0.046 .094" rgba=".9 .6 .6 1"/>
          </body>
        </body>
      </body>
      <body name="fthigh" pos=".5 0 0">
        <joint name="fthigh" type="hinge" axis="0 1 0" pos="0 0 0" range="-1 .7" stiffness="180"
               damping="4.5"/>
        <geom name="fthigh" type="capsule" pos="-.07 0 -.12" axisangle="0 1 0 .52"
              size="0.046 .133"/>
        <body name="fshin" pos="-.14 0 -.24">
          <joint name="fshin" type="hinge" axis="0 1 0" pos="0 0 0" range="-1.2 .87"
                 stiffness="120" damping="3"/>
          <geom name="fshin" type="capsule" pos=".065 0 -.09" axisangle="0 1 0 -.6"
                size="0.046 .106" rgba=".9 .6 .6 1"/>
          <body name="ffoot" pos=".13 0 -.18">
            <joint name="ffoot" type="hinge" axis="0 1 0" pos="0 0 0" range="-.5 .5"
                   stiffness="60" damping="1.5"/>
            <geom name="ffoot" type="capsule" pos=".045 0 -.07" axisangle="0 1 0 -.6"
                  size="0.046 .07" rgba=".9 .6 .6 1"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor name="bthigh" joint="bthigh" gear="120"/>
    <motor name="bshin" joint="bshin" gear="90"/>
    <motor name="bfoot" joint="bfoot" gear="60"/>
    <motor name="fthigh" joint="fthigh" gear="120"/>
    <motor name="fshin" joint="fshin" gear="60"/>
    <motor name="ffoot" joint="ffoot" gear="30"/>
  </actuator>
</mujoco>
)";

// Hopper: gym's hopper.xml (global coordinates) rewritten with every position relative to its
// parent body; joints and geoms land on the same world points, so the physics is unchanged.
const std::string kHopperXml = std::string(R"(<mujoco model="hopper">
  <compiler angle="degree" coordinate="local" inertiafromgeom="true"/>
  <default>
    <joint armature="1" damping="1" limited="true"/>
    <geom contype="1" conaffinity="1" condim="1" margin="0.001" solimp=".8 .8 .01" solref=".02 1"
          material="geom" rgba=".8 .6 .4 1"/>
    <motor ctrllimited="true" ctrlrange="-.4 .4"/>
  </default>
  <option integrator="RK4" timestep="0.002"/>)") +
                               kVisuals + R"(
  <worldbody>
    <light cutoff="100" diffuse="1 1 1" dir="-0 0 -1.3" directional="true" exponent="1"
           pos="0 0 1.3" specular=".1 .1 .1"/>
    <geom name="floor" type="plane" pos="0 0 0" size="20 20 .125" conaffinity="1" condim="3"
          material="MatPlane" rgba=".8 .9 .8 1"/>
    <body name="torso" pos="0 0 1.25">
      <camera name="track" mode="trackcom" pos="0 -3 -0.25" xyaxes="1 0 0 0 0 1"/>
      <joint name="rootx" type="slide" axis="1 0 0" pos="0 0 -1.25" armature="0" damping="0"
             stiffness="0" limited="false"/>
      <joint name="rootz" type="slide" axis="0 0 1" pos="0 0 -1.25" ref="1.25" armature="0"
             damping="0" stiffness="0" limited="false"/>
      <joint name="rooty" type="hinge" axis="0 1 0" pos="0 0 0" armature="0" damping="0"
             stiffness="0" limited="false"/>
      <geom name="torso_geom" type="capsule" fromto="0 0 .2 0 0 -.2" size="0.05" friction="0.9"/>
      <body name="thigh" pos="0 0 -.2">
        <joint name="thigh_joint" type="hinge" axis="0 -1 0" pos="0 0 0" range="-150 0"/>
        <geom name="thigh_geom" type="capsule" fromto="0 0 0 0 0 -.45" size="0.05"
              friction="0.9"/>
        <body name="leg" pos="0 0 -.7">
          <joint name="leg_joint" type="hinge" axis="0 -1 0" pos="0 0 .25" range="-150 0"/>
          <geom name="leg_geom" type="capsule" fromto="0 0 .25 0 0 -.25" size="0.04"
                friction="0.9"/>
          <body name="foot" pos=".13 0 -.35">
            <joint name="foot_joint" type="hinge" axis="0 -1 0" pos="-.13 0 .1" range="-45 45"/>
            <geom name="foot_geom" type="capsule" fromto="-.26 0 .1 .13 0 .1" size="0.06"
                  friction="2.0"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor joint="thigh_joint" ctrllimited="true" ctrlrange="-1 1" gear="200"/>
    <motor joint="leg_joint" ctrllimited="true" ctrlrange="-1 1" gear="200"/>
    <motor joint="foot_joint" ctrllimited="true" ctrlrange="-1 1" gear="200"/>
  </actuator>
</mujoco>
)";

// Walker2d: gym's walker2d.xml (global coordinates) made local the same way. Left foot friction
// 1.9; the right foot 0.9 in gym v2-v4 (walker2d.xml), 1.9 in Gymnasium v5 (walker2d_v5.xml, "Set
// feet friction to 1.9"): the one difference between the two models.
std::string walker2d_xml(const char* right_foot_friction) {
  return std::string(R"(<mujoco model="walker2d">
  <compiler angle="degree" coordinate="local" inertiafromgeom="true"/>
  <default>
    <joint armature="0.01" damping=".1" limited="true"/>
    <geom contype="1" conaffinity="0" condim="3" density="1000" friction=".7 .1 .1"
          rgba=".8 .6 .4 1"/>
  </default>
  <option integrator="RK4" timestep="0.002"/>)") +
         kVisuals + R"(
  <worldbody>
    <light cutoff="100" diffuse="1 1 1" dir="-0 0 -1.3" directional="true" exponent="1"
           pos="0 0 1.3" specular=".1 .1 .1"/>
    <geom name="floor" type="plane" pos="0 0 0" size="40 40 40" conaffinity="1" condim="3"
          material="MatPlane" rgba=".8 .9 .8 1"/>
    <body name="torso" pos="0 0 1.25">
      <camera name="track" mode="trackcom" pos="0 -3 -0.25" xyaxes="1 0 0 0 0 1"/>
      <joint name="rootx" type="slide" axis="1 0 0" pos="0 0 -1.25" armature="0" damping="0"
             stiffness="0" limited="false"/>
      <joint name="rootz" type="slide" axis="0 0 1" pos="0 0 -1.25" ref="1.25" armature="0"
             damping="0" stiffness="0" limited="false"/>
      <joint name="rooty" type="hinge" axis="0 1 0" pos="0 0 0" armature="0" damping="0"
             stiffness="0" limited="false"/>
      <geom name="torso_geom" type="capsule" fromto="0 0 .2 0 0 -.2" size="0.05" friction="0.9"/>
      <body name="thigh" pos="0 0 -.2">
        <joint name="thigh_joint" type="hinge" axis="0 -1 0" pos="0 0 0" range="-150 0"/>
        <geom name="thigh_geom" type="capsule" fromto="0 0 0 0 0 -.45" size="0.05"
              friction="0.9"/>
        <body name="leg" pos="0 0 -.7">
          <joint name="leg_joint" type="hinge" axis="0 -1 0" pos="0 0 .25" range="-150 0"/>
          <geom name="leg_geom" type="capsule" fromto="0 0 .25 0 0 -.25" size="0.04"
                friction="0.9"/>
          <body name="foot" pos=".2 0 -.35">
            <joint name="foot_joint" type="hinge" axis="0 -1 0" pos="-.2 0 .1" range="-45 45"/>
            <geom name="foot_geom" type="capsule" fromto="-.2 0 .1 0 0 .1" size="0.06"
                  friction=")" +
         right_foot_friction + R"("/>
          </body>
        </body>
      </body>
      <body name="thigh_left" pos="0 0 -.2">
        <joint name="thigh_left_joint" type="hinge" axis="0 -1 0" pos="0 0 0" range="-150 0"/>
        <geom name="thigh_left_geom" type="capsule" fromto="0 0 0 0 0 -.45" size="0.05"
              friction="0.9" rgba=".7 .3 .6 1"/>
        <body name="leg_left" pos="0 0 -.7">
          <joint name="leg_left_joint" type="hinge" axis="0 -1 0" pos="0 0 .25" range="-150 0"/>
          <geom name="leg_left_geom" type="capsule" fromto="0 0 .25 0 0 -.25" size="0.04"
                friction="0.9" rgba=".7 .3 .6 1"/>
          <body name="foot_left" pos=".2 0 -.35">
            <joint name="foot_left_joint" type="hinge" axis="0 -1 0" pos="-.2 0 .1"
                   range="-45 45"/>
            <geom name="foot_left_geom" type="capsule" fromto="-.2 0 .1 0 0 .1" size="0.06"
                  friction="1.9" rgba=".7 .3 .6 1"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor joint="thigh_joint" ctrllimited="true" ctrlrange="-1 1" gear="100"/>
    <motor joint="leg_joint" ctrllimited="true" ctrlrange="-1 1" gear="100"/>
    <motor joint="foot_joint" ctrllimited="true" ctrlrange="-1 1" gear="100"/>
    <motor joint="thigh_left_joint" ctrllimited="true" ctrlrange="-1 1" gear="100"/>
    <motor joint="leg_left_joint" ctrllimited="true" ctrlrange="-1 1" gear="100"/>
    <motor joint="foot_left_joint" ctrllimited="true" ctrlrange="-1 1" gear="100"/>
  </actuator>
</mujoco>
)";
}

// MuJoCo's XML parser keeps global state in some versions; one compile at a time.
std::mutex g_compile_mutex;

}  // namespace

const std::string& embedded_mjcf(const std::string& model_name) {
  static const std::string walker2d = walker2d_xml("0.9"), walker2d_v5 = walker2d_xml("1.9");
  if (model_name == "halfcheetah") return kHalfCheetahXml;
  if (model_name == "hopper") return kHopperXml;
  if (model_name == "walker2d") return walker2d;
  if (model_name == "walker2d-v5") return walker2d_v5;
  throw std::invalid_argument("no embedded MJCF model named '" + model_name +
                              "' (known: halfcheetah, hopper, walker2d, walker2d-v5)");
}

ModelPtr compile_mjcf(const std::string& file_name, const std::string& xml) {
  std::lock_guard<std::mutex> lock(g_compile_mutex);
  // mjVFS is ~2 MB in MuJoCo 2.x: keep it off the stack.
  auto vfs = std::make_unique<mjVFS>();
  mj_defaultVFS(vfs.get());
#if mjVERSION_HEADER >= 300
  if (mj_addBufferVFS(vfs.get(), file_name.c_str(), xml.data(), static_cast<int>(xml.size())) !=
      0) {
    throw std::runtime_error("could not add '" + file_name + "' to MuJoCo's virtual file system");
  }
#else
  if (mj_makeEmptyFileVFS(vfs.get(), file_name.c_str(), static_cast<int>(xml.size())) != 0) {
    throw std::runtime_error("could not add '" + file_name + "' to MuJoCo's virtual file system");
  }
  std::memcpy(vfs->filedata[vfs->nfile - 1], xml.data(), xml.size());
#endif
  char error[1000] = "";
  ModelPtr model(mj_loadXML(file_name.c_str(), vfs.get(), error, sizeof(error)));
  mj_deleteVFS(vfs.get());
  if (!model) {
    throw std::runtime_error("MuJoCo could not compile MJCF '" + file_name + "': " + error);
  }
  return model;
}

std::shared_ptr<const mjModel> load_embedded_model(const std::string& model_name) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const mjModel>> compiled;
  const std::lock_guard<std::mutex> lock(mutex);
  auto it = compiled.find(model_name);
  if (it == compiled.end()) {
    std::shared_ptr<const mjModel> model(
        compile_mjcf(model_name + ".xml", embedded_mjcf(model_name)).release(), ModelDeleter());
    it = compiled.emplace(model_name, std::move(model)).first;
  }
  return it->second;
}

}  // namespace minrnn::envs
