#include "datasets/read_isolated.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "io/isolated.h"

namespace minrnn::data::detail {
namespace {

// --- the child's side: a buffered writer onto the pipe -----------------------------------------

class Out {
 public:
  explicit Out(int fd) : fd_(fd) {}
  ~Out() { flush(); }
  void bytes(const void* p, size_t n) {
    if (n >= 65536) {
      flush();
      put(p, n);
      return;
    }
    if (buf_.size() + n > 65536) flush();
    buf_.insert(buf_.end(), static_cast<const char*>(p), static_cast<const char*>(p) + n);
  }
  void i64(int64_t v) { bytes(&v, sizeof v); }
  void f64(double v) { bytes(&v, sizeof v); }
  void str(const std::string& s) {
    i64(static_cast<int64_t>(s.size()));
    bytes(s.data(), s.size());
  }
  template <typename T>
  void vec(const std::vector<T>& v) {
    i64(static_cast<int64_t>(v.size()));
    bytes(v.data(), v.size() * sizeof(T));
  }
  void floats(const FloatArray& a) {
    vec(a.shape);
    vec(a.values);
  }
  // field(): one name for every type, so a struct's fields are listed once (minari_fields) for
  // both directions.
  void field(const std::string& s) { str(s); }
  void field(double v) { f64(v); }
  void field(int64_t v) { i64(v); }
  void field(int v) { i64(v); }
  void field(bool v) { i64(v ? 1 : 0); }
  template <typename T>
  void field(const std::vector<T>& v) {
    vec(v);
  }
  void field(const std::vector<std::string>& v) {
    i64(static_cast<int64_t>(v.size()));
    for (const auto& x : v) str(x);
  }
  void field(const FloatArray& a) { floats(a); }
  template <typename T>
  void field(const std::map<std::string, T>& m) {
    i64(static_cast<int64_t>(m.size()));
    for (const auto& [k, v] : m) {
      str(k);
      field(v);
    }
  }
  void flush() {
    put(buf_.data(), buf_.size());
    buf_.clear();
  }

 private:
  void put(const void* p, size_t n) {
    const char* c = static_cast<const char*>(p);
    while (n > 0) {
      const ssize_t w = ::write(fd_, c, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) ::_exit(3);  // the parent is gone
      c += w;
      n -= static_cast<size_t>(w);
    }
  }
  int fd_;
  std::vector<char> buf_;
};

// --- the parent's side
// -----------------------------------------------------------------------------

struct ChildDied {};

class In {
 public:
  explicit In(int fd) : fd_(fd) {}
  void bytes(void* p, size_t n) {
    char* c = static_cast<char*>(p);
    while (n > 0) {
      const ssize_t r = ::read(fd_, c, n);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) throw ChildDied{};
      c += r;
      n -= static_cast<size_t>(r);
    }
  }
  int64_t i64() {
    int64_t v;
    bytes(&v, sizeof v);
    return v;
  }
  double f64() {
    double v;
    bytes(&v, sizeof v);
    return v;
  }
  int64_t size() {
    const int64_t n = i64();
    if (n < 0 || n > (int64_t{1} << 40)) throw ChildDied{};
    return n;
  }
  std::string str() {
    std::string s(static_cast<size_t>(size()), '\0');
    bytes(s.data(), s.size());
    return s;
  }
  template <typename T>
  void vec(std::vector<T>& v) {
    v.resize(static_cast<size_t>(size()));
    bytes(v.data(), v.size() * sizeof(T));
  }
  FloatArray floats() {
    FloatArray a;
    vec(a.shape);
    vec(a.values);
    return a;
  }
  void field(std::string& s) { s = str(); }
  void field(double& v) { v = f64(); }
  void field(int64_t& v) { v = i64(); }
  void field(int& v) { v = static_cast<int>(i64()); }
  void field(bool& v) { v = i64() != 0; }
  template <typename T>
  void field(std::vector<T>& v) {
    vec(v);
  }
  void field(std::vector<std::string>& v) {
    v.clear();
    for (int64_t n = size(); n > 0; --n) v.push_back(str());
  }
  void field(FloatArray& a) { a = floats(); }
  template <typename T>
  void field(std::map<std::string, T>& m) {
    m.clear();
    for (int64_t n = size(); n > 0; --n) {
      std::string k = str();
      field(m[k]);
    }
  }

 private:
  int fd_;
};

// Every field of Transitions and MinariInfo, each listed once for the child's send and the parent's
// receive: a field left out here would arrive empty.
template <typename Stream, typename Data>
void d4rl_fields(Stream& s, Data& d) {
  s.field(d.obs_dim);
  s.field(d.act_dim);
  s.field(d.observations);
  s.field(d.next_observations);
  s.field(d.actions);
  s.field(d.rewards);
  s.field(d.terminals);
  s.field(d.timeouts);
  s.field(d.infos);
  s.field(d.metadata.strings);
  s.field(d.metadata.ints);
  s.field(d.metadata.arrays);
  s.field(d.metadata.unread);
}
template <typename Stream, typename Space>
void space_fields(Stream& s, Space& space) {
  s.field(space.present);
  s.field(space.type);
  s.field(space.dtype);
  s.field(space.shape);
  s.field(space.low);
  s.field(space.high);
  s.field(space.text);
}
template <typename Stream, typename Info>
void minari_fields(Stream& s, Info& info) {
  s.field(info.dataset_id);
  s.field(info.metadata_path);
  s.field(info.minari_version);
  s.field(info.env_spec);
  s.field(info.eval_env_spec);
  s.field(info.env_id);
  s.field(info.eval_env_id);
  s.field(info.max_episode_steps);
  s.field(info.observes_x);
  space_fields(s, info.observation_space);
  space_fields(s, info.action_space);
  s.field(info.total_episodes);
  s.field(info.total_steps);
  s.field(info.declared_episodes);
  s.field(info.declared_steps);
  s.field(info.has_ref_scores);
  s.field(info.ref_min_score);
  s.field(info.ref_max_score);
  s.field(info.episodes_without_end_flag);
  s.field(info.collected_by_minrnn);
}

enum : int64_t { kOk = 0, kInvalidArgument = 1, kRuntimeError = 2 };

void send(Out& out, const Transitions& d, const MinariInfo* info) {
  out.i64(kOk);
  d4rl_fields(out, d);
  out.i64(info != nullptr);
  if (info) minari_fields(out, *info);
}

Transitions receive(In& in, MinariInfo* info) {
  Transitions d;
  d4rl_fields(in, d);
  if (in.i64()) {
    MinariInfo got;
    minari_fields(in, got);
    if (info) *info = got;
  }
  return d;
}

// The child's answer: its data, or what it threw; an error naming `path` where it died first.
Transitions receive_from(io::ForkedChild& child, const std::string& path, MinariInfo* info) {
  In in(child.read_fd());
  try {
    const int64_t kind = in.i64();
    if (kind == kOk) {
      Transitions d = receive(in, info);
      if (child.wait() == 0) return d;
    } else {
      const std::string message = in.str();
      child.wait();
      if (kind == kInvalidArgument) throw std::invalid_argument(message);
      throw std::runtime_error(message);
    }
  } catch (const ChildDied&) {
  }
  const int status = child.wait();
  const std::string how = status == 0 ? "ended early" : io::wait_status_text(status);
  throw std::runtime_error(path + ": cannot read: the HDF5 library " + how +
                           " reading it (a corrupt file, or a kind of HDF5 file it cannot "
                           "read); the file is left as it is");
}

}  // namespace

Transitions read_isolated(const std::string& path, MinariInfo* info,
                          const std::function<Transitions(MinariInfo*)>& read) {
  if (io::read_in_process()) {
    return read(info);
  }
  const auto read_and_send = [&](int fd) {
    ::signal(SIGPIPE, SIG_DFL);
    Out out(fd);
    try {
      MinariInfo child_info;
      const Transitions d = read(info ? &child_info : nullptr);
      send(out, d, info ? &child_info : nullptr);
    } catch (const std::invalid_argument& e) {
      out.i64(kInvalidArgument);
      out.str(e.what());
    } catch (const std::exception& e) {
      out.i64(kRuntimeError);
      out.str(e.what());
    }
  };
  std::optional<io::ForkedChild> child;
  try {
    child.emplace(read_and_send);
  } catch (const std::system_error& e) {  // no pipe or no fork
    throw std::runtime_error(path + ": cannot read: " + e.what());
  }
  return receive_from(*child, path, info);
}

}  // namespace minrnn::data::detail
