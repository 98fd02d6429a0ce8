#include "kernels/cpu/workers.h"

namespace minrnn::core::cpu {
namespace {

thread_local io::Workers* current = nullptr;

}  // namespace

io::Workers* current_workers() {
  return current;
}

WorkersScope::WorkersScope(io::Workers* workers) : previous_(current) {
  current = workers;
}
WorkersScope::~WorkersScope() {
  current = previous_;
}

}  // namespace minrnn::core::cpu
