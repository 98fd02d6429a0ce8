// Writing HDF5 files in the layouts the readers take (D4RL, Minari): every call checks its HDF5
// status, so a full disk or a size limit fails naming the key and the OS reason.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "datasets/hdf5_util.h"

namespace minrnn::data::h5 {
namespace {

[[noreturn]] void write_failed(const std::string& what, const std::string& key) {
  throw std::runtime_error("cannot " + what + " dataset '" + key + "': " + failure_reason());
}

Id create_with_parents(hid_t file, const std::string& key, hid_t type, hid_t space, hid_t dcpl) {
  Id lcpl(H5Pcreate(H5P_LINK_CREATE));
  H5Pset_create_intermediate_group(lcpl.get(), 1);
  Id dset(H5Dcreate2(file, key.c_str(), type, space, lcpl.get(), dcpl, H5P_DEFAULT));
  if (!dset.valid()) write_failed("create", key);
  return dset;
}

// Writes `dset` whole from `values` and closes it (a chunked dataset's last chunks are written at
// close, so that is checked too).
void write_and_close(Id dset, hid_t mem_type, const void* values, const std::string& key) {
  if (H5Dwrite(dset.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) < 0)
    write_failed("write", key);
  if (H5Dclose(dset.release()) < 0) write_failed("write", key);
}

// HDF5 stamps every object with its creation time unless told not to; without the stamps the
// same data always gives the same bytes, so a file's checksum identifies its contents.
Id untimed(hid_t property_class) {
  Id plist(H5Pcreate(property_class));
  H5Pset_obj_track_times(plist.get(), 0);
  return plist;
}

Id chunked_gzip(const std::vector<hsize_t>& dims, size_t element_size, int gzip_level) {
  Id dcpl = untimed(H5P_DATASET_CREATE);
  if (gzip_level <= 0 || dims.empty() || dims[0] == 0) return dcpl;
  // About 256 KiB per chunk: large enough for gzip to pay off, small enough to cache.
  size_t row_bytes = element_size;
  for (size_t i = 1; i < dims.size(); ++i) row_bytes *= dims[i];
  std::vector<hsize_t> chunk(dims);
  chunk[0] = std::clamp<hsize_t>((256 * 1024) / std::max<size_t>(row_bytes, 1), 1, dims[0]);
  H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data());
  H5Pset_deflate(dcpl.get(), static_cast<unsigned>(gzip_level));
  return dcpl;
}

// A dataset of `shape` (empty: a scalar) stored as `file_type`, chunked and gzip-compressed when
// gzip_level > 0, written whole from `values` (`mem_type`).
void write_array(hid_t file, const std::string& key, const std::vector<int64_t>& shape,
                 const void* values, size_t element_size, hid_t file_type, hid_t mem_type,
                 int gzip_level) {
  std::vector<hsize_t> dims(shape.begin(), shape.end());
  Id space(dims.empty() ? H5Screate(H5S_SCALAR)
                        : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr));
  Id dcpl = chunked_gzip(dims, element_size, gzip_level);
  write_and_close(create_with_parents(file, key, file_type, space.get(), dcpl.get()), mem_type,
                  values, key);
}

}  // namespace

void write_floats(hid_t file, const std::string& key, const std::vector<int64_t>& shape,
                  const float* values, int gzip_level) {
  write_array(file, key, shape, values, sizeof(float), H5T_IEEE_F32LE, H5T_NATIVE_FLOAT,
              gzip_level);
}

void write_doubles(hid_t file, const std::string& key, const std::vector<int64_t>& shape,
                   const double* values, int gzip_level) {
  write_array(file, key, shape, values, sizeof(double), H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
              gzip_level);
}

void create_group(hid_t file, const std::string& path) {
  Id lcpl(H5Pcreate(H5P_LINK_CREATE));
  H5Pset_create_intermediate_group(lcpl.get(), 1);
  Id gcpl = untimed(H5P_GROUP_CREATE);
  Id group(H5Gcreate2(file, path.c_str(), lcpl.get(), gcpl.get(), H5P_DEFAULT));
  if (!group.valid()) throw std::runtime_error("cannot create group '" + path + "'");
}

void write_int_attribute(hid_t file, const std::string& path, const std::string& name,
                         int64_t value) {
  Id space(H5Screate(H5S_SCALAR));
  Id attr(H5Acreate_by_name(file, path.c_str(), name.c_str(), H5T_STD_I64LE, space.get(),
                            H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!attr.valid() || H5Awrite(attr.get(), H5T_NATIVE_INT64, &value) < 0) {
    throw std::runtime_error("cannot write attribute '" + name + "' of '" + path + "'");
  }
}

void write_bools(hid_t file, const std::string& key, const std::vector<uint8_t>& flags,
                 int gzip_level) {
  // h5py stores numpy bool as an enum of int8 {FALSE=0, TRUE=1}; write the same so Python reads
  // bool.
  Id type(H5Tenum_create(H5T_NATIVE_INT8));
  int8_t no = 0, yes = 1;
  H5Tenum_insert(type.get(), "FALSE", &no);
  H5Tenum_insert(type.get(), "TRUE", &yes);
  std::vector<hsize_t> dims{flags.size()};
  Id space(H5Screate_simple(1, dims.data(), nullptr));
  Id dcpl = chunked_gzip(dims, 1, gzip_level);
  write_and_close(create_with_parents(file, key, type.get(), space.get(), dcpl.get()), type.get(),
                  flags.data(), key);
}

void write_string(hid_t file, const std::string& key, const std::string& value) {
  Id type(H5Tcopy(H5T_C_S1));
  H5Tset_size(type.get(), std::max<size_t>(value.size(), 1));
  H5Tset_strpad(type.get(), H5T_STR_NULLPAD);  // as h5py writes numpy bytes
  Id space(H5Screate(H5S_SCALAR));
  Id dcpl = untimed(H5P_DATASET_CREATE);
  std::string padded = value;
  padded.resize(std::max<size_t>(value.size(), 1), '\0');
  write_and_close(create_with_parents(file, key, type.get(), space.get(), dcpl.get()), type.get(),
                  padded.data(), key);
}

void write_int(hid_t file, const std::string& key, int64_t value) {
  bool fits32 = value >= INT32_MIN && value <= INT32_MAX;
  Id space(H5Screate(H5S_SCALAR));
  Id dcpl = untimed(H5P_DATASET_CREATE);
  write_and_close(create_with_parents(file, key, fits32 ? H5T_STD_I32LE : H5T_STD_I64LE,
                                      space.get(), dcpl.get()),
                  H5T_NATIVE_INT64, &value, key);
}

}  // namespace minrnn::data::h5
