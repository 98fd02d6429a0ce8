// Thin helpers over the HDF5 C API shared by the D4RL and Minari readers and the writer: owned
// handles, checked opens, typed reads into caller buffers, and D4RL-style writes. Internal to
// datasets/. Every error message names the file and the key.
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace minrnn::data::h5 {

// Owns one HDF5 identifier (file, group, dataset, dataspace, datatype, property list, attribute)
// and closes it with the matching H5?close.
class Id {
 public:
  Id() = default;
  explicit Id(hid_t id) : id_(id) {}
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  Id(Id&& other) noexcept : id_(other.id_) { other.id_ = H5I_INVALID_HID; }
  Id& operator=(Id&& other) noexcept;
  ~Id() { reset(); }
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  void reset();
  // Gives up ownership (to close explicitly and check the result).
  hid_t release() {
    hid_t id = id_;
    id_ = H5I_INVALID_HID;
    return id;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

// Turns off HDF5's own error-stack printing (we raise our own messages). Idempotent.
void silence_errors();

// Opens an existing HDF5 file read-only; throws when absent, not HDF5, or unreadable.
Id open_for_reading(const std::string& path);

// True when every component of `path` ("infos/qpos") exists below `loc`.
bool exists(hid_t loc, const std::string& path);

// Names of the links directly below the group `path` ("" for the root), in HDF5 name order.
std::vector<std::string> list_group(hid_t file, const std::string& path,
                                    const std::string& file_name);
bool is_group(hid_t file, const std::string& path);

struct DatasetInfo {
  std::vector<int64_t> shape;
  H5T_class_t type_class = H5T_NO_CLASS;
  size_t type_size = 0;
};
DatasetInfo describe(hid_t file, const std::string& key, const std::string& file_name);

// Reads rows [row0, row0 + num_rows) of a floating-point dataset (any rank; a row is the product
// of the trailing dimensions) into `dst` as float. Throws unless the dataset's class is float.
void read_float_rows(hid_t file, const std::string& key, int64_t row0, int64_t num_rows, float* dst,
                     const std::string& file_name);
std::vector<float> read_floats(hid_t file, const std::string& key, const std::string& file_name);

// Reads rows of a flag dataset (h5py bool = enum of int8, any integer, or float 0.0/1.0 as older
// D4RL files store them) into 0/1 bytes; throws on another class or on a value other than 0/1,
// naming the row.
void read_flag_rows(hid_t file, const std::string& key, int64_t row0, int64_t num_rows,
                    uint8_t* dst, const std::string& file_name);

// Scalar string (fixed or variable length) or scalar integer datasets.
std::string read_string(hid_t file, const std::string& key, const std::string& file_name);
int64_t read_int(hid_t file, const std::string& key, const std::string& file_name);

// For the readers in datasets/hdf5_*.cpp: "<file>: '<key>'" for messages; a dataset opened with
// its declared size checked against the file's (a missing key says what the file holds); rows
// [row0, row0 + num_rows) selected in a file dataspace and a matching memory space; the error of a
// read HDF5 refused, with HDF5's own reason.
std::string where(const std::string& file_name, const std::string& key);
Id open_dataset(hid_t file, const std::string& key, const std::string& file_name);
struct RowSelection {
  Id file_space, mem_space;
};
RowSelection select_rows(hid_t dset, int64_t row0, int64_t num_rows, const std::string& what);
// A read of `dset` that failed: a filter this HDF5 cannot decode (h5py's LZF) said as such; a
// system call's failure (EIO from a failing disk or NFS) as the OS said it, no word of the file's
// contents; else HDF5's reason and "a corrupt file?". Call it first after the failed read
// (failure_reason).
std::runtime_error read_failure(hid_t dset, const std::string& file_name, const std::string& key);

// Why the HDF5 call that just failed failed, from HDF5's error stack: the OS reason where the
// failure was a system call's ("File too large", "No space left on device"), else HDF5's own
// description; `os_errno`, where given, gets the system call's errno (0 where the failure was
// none's). Call it before any other HDF5 call (each one clears the stack).
std::string failure_reason(int* os_errno = nullptr);
// Why H5Fopen refused a file HDF5 recognizes, the same way; a file shorter than its superblock
// records is "truncated", with both sizes. (hdf5_errors.cpp)
std::string open_failure_reason();

// Writers: create intermediate groups as needed; shape is row-major; chunked + gzip when
// gzip_level > 0 and the dataset is not a scalar. Each dataset is closed (its chunks flushed)
// before they return; a failure throws std::runtime_error naming the key and failure_reason().
void write_floats(hid_t file, const std::string& key, const std::vector<int64_t>& shape,
                  const float* values, int gzip_level);
void write_bools(hid_t file, const std::string& key, const std::vector<uint8_t>& flags,
                 int gzip_level);
void write_doubles(hid_t file, const std::string& key, const std::vector<int64_t>& shape,
                   const double* values, int gzip_level);
void write_string(hid_t file, const std::string& key, const std::string& value);
// An (empty) group, parents included.
void create_group(hid_t file, const std::string& path);
// A scalar int64 attribute on the object (group or dataset) at `path`.
void write_int_attribute(hid_t file, const std::string& path, const std::string& name,
                         int64_t value);
void write_int(hid_t file, const std::string& key, int64_t value);

}  // namespace minrnn::data::h5
