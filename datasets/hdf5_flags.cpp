// End flags (terminals, timeouts, Minari's terminations/truncations) as 0/1 bytes, whatever type
// the file stores them in (datasets/hdf5_util.h: read_flag_rows).
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "datasets/hdf5_util.h"

namespace minrnn::data::h5 {
namespace {

[[noreturn]] void not_a_flag(const std::string& file_name, const std::string& key,
                             const std::string& value, int64_t row) {
  throw std::invalid_argument(where(file_name, key) + ": value " + value + " at row " +
                              std::to_string(row) + " is not 0/1");
}

// Older D4RL sets and many conversions store flags as float 0.0/1.0: exactly those two values.
void read_float_flags(hid_t dset, const RowSelection& sel, int64_t row0, int64_t num_rows,
                      uint8_t* dst, const std::string& file_name, const std::string& key) {
  std::vector<double> values(static_cast<size_t>(num_rows));
  if (H5Dread(dset, H5T_NATIVE_DOUBLE, sel.mem_space.get(), sel.file_space.get(), H5P_DEFAULT,
              values.data()) < 0) {
    throw read_failure(dset, file_name, key);
  }
  for (int64_t i = 0; i < num_rows; ++i) {
    const double v = values[i];
    if (v != 0.0 && v != 1.0) {
      char shown[32];
      std::snprintf(shown, sizeof(shown), "%.9g", v);
      not_a_flag(file_name, key, shown, row0 + i);
    }
    dst[i] = v == 1.0 ? 1 : 0;
  }
}

// An integer of `size` bytes at `p`, sign-extended where `is_signed`.
int64_t stored_integer(const unsigned char* p, size_t size, bool is_signed) {
  switch (size) {
    case 1:
      return is_signed ? int64_t{*reinterpret_cast<const int8_t*>(p)} : int64_t{*p};
    case 2: {
      int16_t v;
      std::memcpy(&v, p, 2);
      return is_signed ? v : static_cast<uint16_t>(v);
    }
    case 4: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return is_signed ? v : static_cast<uint32_t>(v);
    }
    default: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
  }
}

// An enum cannot be converted to an integer by HDF5: read it with its own (native) enum type and
// interpret the stored integers; an integer dataset is converted to int64 directly.
void read_integer_flags(hid_t dset, hid_t type, bool is_enum, const RowSelection& sel, int64_t row0,
                        int64_t num_rows, uint8_t* dst, const std::string& file_name,
                        const std::string& key) {
  Id mem_type(is_enum ? H5Tget_native_type(type, H5T_DIR_ASCEND) : H5Tcopy(H5T_NATIVE_INT64));
  const size_t size = H5Tget_size(mem_type.get());
  const bool is_signed =
      H5Tget_sign(is_enum ? Id(H5Tget_super(type)).get() : mem_type.get()) == H5T_SGN_2;
  if (size != 1 && size != 2 && size != 4 && size != 8) {
    throw std::invalid_argument(where(file_name, key) + ": unsupported flag width");
  }
  std::vector<unsigned char> raw(static_cast<size_t>(num_rows) * size);
  if (H5Dread(dset, mem_type.get(), sel.mem_space.get(), sel.file_space.get(), H5P_DEFAULT,
              raw.data()) < 0) {
    throw read_failure(dset, file_name, key);
  }
  for (int64_t i = 0; i < num_rows; ++i) {
    const int64_t value = stored_integer(raw.data() + i * size, size, is_signed);
    if (value != 0 && value != 1) not_a_flag(file_name, key, std::to_string(value), row0 + i);
    dst[i] = static_cast<uint8_t>(value);
  }
}

}  // namespace

void read_flag_rows(hid_t file, const std::string& key, int64_t row0, int64_t num_rows,
                    uint8_t* dst, const std::string& file_name) {
  Id dset = open_dataset(file, key, file_name);
  Id type(H5Dget_type(dset.get()));
  H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_ENUM && cls != H5T_INTEGER && cls != H5T_FLOAT) {
    throw std::invalid_argument(where(file_name, key) +
                                ": expected bool (h5py enum int8), integer 0/1 or float 0.0/1.0 "
                                "values");
  }
  if (num_rows == 0) return;
  const RowSelection sel = select_rows(dset.get(), row0, num_rows, where(file_name, key));
  if (cls == H5T_FLOAT) {
    read_float_flags(dset.get(), sel, row0, num_rows, dst, file_name, key);
  } else {
    read_integer_flags(dset.get(), type.get(), cls == H5T_ENUM, sel, row0, num_rows, dst, file_name,
                       key);
  }
}

}  // namespace minrnn::data::h5
