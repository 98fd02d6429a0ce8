#include "rl/archive_io.h"

#include "io/atomic_file.h"

namespace minrnn::rl {

void save_archive_atomically(torch::serialize::OutputArchive& archive, const std::string& path) {
  io::AtomicFile out(path);
  try {
    // The callback must not throw (it runs inside torch's zip writer), nor report a short write
    // (torch 2.11 then throws from a destructor: std::terminate). A failed write is recorded,
    // the rest of the archive goes nowhere, and check() below raises the failure.
    archive.save_to([&out](const void* data, size_t size) -> size_t {
      out.try_write(data, size);
      return size;
    });
    out.check();
  } catch (const std::exception& e) {
    out.check();  // the OS reason, when a write failed
    throw io::WriteError(io::write_failure(path, e.what()));
  }
  out.commit();
}

}  // namespace minrnn::rl
