// HDF5's error stack read into the reasons our messages give (hdf5_util.h).
#include <hdf5.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "datasets/hdf5_util.h"

namespace minrnn::data::h5 {
namespace {

// HDF5's error stack as its descriptions, innermost first.
std::vector<std::string> error_descriptions() {
  std::vector<std::string> descriptions;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned, const H5E_error2_t* e, void* data) -> herr_t {
        static_cast<std::vector<std::string>*>(data)->push_back(e->desc ? e->desc : "");
        return 0;
      },
      &descriptions);
  return descriptions;
}

// The number after `label` in `text`, or 0 where it has none.
unsigned long long number_after(const std::string& text, const std::string& label) {
  const size_t at = text.find(label);
  return at == std::string::npos ? 0 : std::strtoull(text.c_str() + at + label.size(), nullptr, 10);
}

// HDF5's POSIX driver describes a failed system call as "... errno = 28, error message = 'No
// space left on device' ...": the innermost such entry's errno (0 where none is).
int os_errno_of(const std::vector<std::string>& descriptions) {
  for (const std::string& desc : descriptions) {
    const size_t at = desc.find("errno = ");
    const int os_errno = at == std::string::npos ? 0 : std::atoi(desc.c_str() + at + 8);
    if (os_errno > 0) return os_errno;
  }
  return 0;
}

}  // namespace

// Where the superblock records more bytes than the file holds (HDF5's "truncated file: eof = N,
// ..., stored_eof = M"), both sizes: a download or copy cut short is the usual cause, and they
// say how much is missing.
std::string open_failure_reason() {
  const std::vector<std::string> descriptions = error_descriptions();
  for (const std::string& desc : descriptions) {
    if (desc.rfind("truncated file", 0) != 0) continue;
    const unsigned long long has = number_after(desc, " eof = ");
    const unsigned long long records = number_after(desc, "stored_eof = ");
    if (records > has) {
      return "truncated: it holds " + std::to_string(has) + " bytes of the " +
             std::to_string(records) +
             " its HDF5 superblock records (a download or copy cut short? Move it away and fetch "
             "it again: `minrnn data download` writes a file only once it is whole, and resumes "
             "its own .part files, not this)";
    }
  }
  // A file the OS would not open (no permission) is no corrupt file.
  if (const int os_errno = os_errno_of(descriptions); os_errno > 0)
    return std::string("cannot read: ") + std::strerror(os_errno);
  const std::string innermost = descriptions.empty() ? "no reason given" : descriptions.front();
  return "cannot open as HDF5 (HDF5: " + innermost + "): a corrupt file?";
}

std::string failure_reason(int* os_errno) {
  const std::vector<std::string> descriptions = error_descriptions();
  const int system_errno = os_errno_of(descriptions);
  if (os_errno) *os_errno = system_errno;
  if (system_errno > 0) return std::strerror(system_errno);
  if (!descriptions.empty() && !descriptions.front().empty())
    return "HDF5: " + descriptions.front();
  return errno != 0 ? std::strerror(errno) : "HDF5 error";
}

}  // namespace minrnn::data::h5
