#include "datasets/hdf5_util.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/input_file.h"

namespace minrnn::data::h5 {

std::string where(const std::string& file_name, const std::string& key) {
  return file_name + ": '" + key + "'";
}

namespace {

// The most a dataset may hold, judged from the file that holds it: its values, stored whole,
// cannot outgrow the file, or (compressed) deflate's ratio of at most 1032:1 — with some slack.
// A header that declares more is corrupt, and is refused before anything is allocated for it.
constexpr double kMaxCompression = 1100;

void check_declared_size(hid_t file, hid_t dset, const std::string& what) {
  Id space(H5Dget_space(dset)), type(H5Dget_type(dset)), dcpl(H5Dget_create_plist(dset));
  const int rank = space.valid() ? H5Sget_simple_extent_ndims(space.get()) : -1;
  const size_t type_size = type.valid() ? H5Tget_size(type.get()) : 0;
  if (rank < 0 || rank > 32 || type_size == 0) {
    throw std::invalid_argument(what + ": unreadable shape or type (corrupt file?)");
  }
  std::vector<hsize_t> dims(rank);
  if (rank > 0 && H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0)
    throw std::invalid_argument(what + ": unreadable shape (corrupt file?)");
  double values = 1;  // in floating point: the product of corrupt dims may overflow 64 bits
  for (hsize_t d : dims) values *= static_cast<double>(d);
  hsize_t file_size = 0;
  Id file_id(H5Iget_file_id(file));
  if (!file_id.valid() || H5Fget_filesize(file_id.get(), &file_size) < 0) {
    throw std::invalid_argument(what + ": cannot tell the file's size");
  }
  const int filters = dcpl.valid() ? H5Pget_nfilters(dcpl.get()) : 0;
  const double limit =
      (filters > 0 ? kMaxCompression : 1.0) * static_cast<double>(file_size) + 4096;
  // Variable-length strings keep their bytes elsewhere in the file; their size here is a handle's.
  const double bytes = values * static_cast<double>(type_size);
  if (bytes > limit) {
    std::vector<int64_t> shape(dims.begin(), dims.end());
    std::string shape_text;
    for (size_t i = 0; i < shape.size(); ++i)
      shape_text += (i ? ", " : "") + std::to_string(shape[i]);
    throw std::invalid_argument(what + ": declares shape (" + shape_text + ") of " +
                                std::to_string(type_size) + "-byte values, more than the " +
                                std::to_string(file_size) +
                                "-byte file can hold (truncated or corrupt file?)");
  }
}

// What the group of a missing key holds instead, for its message: " (the file holds: actions,
// infos, ...)"; a Minari main_data.hdf5 (episode_* groups) is said to be one.
std::string held_instead(hid_t file, const std::string& key, const std::string& file_name) {
  const size_t slash = key.rfind('/');
  const std::string group = slash == std::string::npos ? "" : key.substr(0, slash);
  if (!group.empty() && !is_group(file, group)) return "";
  std::vector<std::string> names;
  try {
    names = list_group(file, group, file_name);
  } catch (const std::exception&) {
    return "";
  }
  const std::string holder = group.empty() ? "the file" : "'" + group + "'";
  if (names.empty()) return " (" + holder + " holds nothing)";
  if (group.empty() && names[0].rfind("episode_", 0) == 0) {
    return " (the file holds episode_* groups: a Minari dataset's data/main_data.hdf5; give the "
           "dataset's folder)";
  }
  std::string list;
  for (size_t i = 0; i < names.size() && i < 12; ++i) list += (i ? ", " : "") + names[i];
  return " (" + holder + " holds: " + list + (names.size() > 12 ? ", ..." : "") + ")";
}

}  // namespace

Id open_dataset(hid_t file, const std::string& key, const std::string& file_name) {
  if (!exists(file, key)) {
    throw std::invalid_argument(where(file_name, key) + ": key is missing" +
                                held_instead(file, key, file_name));
  }
  Id dset(H5Dopen2(file, key.c_str(), H5P_DEFAULT));
  if (!dset.valid()) {
    throw std::invalid_argument(where(file_name, key) + ": not a dataset (or the file is corrupt)");
  }
  check_declared_size(file, dset.get(), where(file_name, key));
  return dset;
}

namespace {

std::vector<int64_t> shape_of(hid_t dset) {
  Id space(H5Dget_space(dset));
  int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) return {};
  std::vector<hsize_t> dims(rank);
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  return std::vector<int64_t>(dims.begin(), dims.end());
}

}  // namespace

RowSelection select_rows(hid_t dset, int64_t row0, int64_t num_rows, const std::string& what) {
  RowSelection sel;
  sel.file_space = Id(H5Dget_space(dset));
  int rank = H5Sget_simple_extent_ndims(sel.file_space.get());
  std::vector<hsize_t> dims(std::max(rank, 0));
  H5Sget_simple_extent_dims(sel.file_space.get(), dims.data(), nullptr);
  if (rank < 1 || row0 < 0 || num_rows < 0 || static_cast<hsize_t>(row0 + num_rows) > dims[0]) {
    throw std::invalid_argument(what + ": rows [" + std::to_string(row0) + ", " +
                                std::to_string(row0 + num_rows) + ") out of range");
  }
  std::vector<hsize_t> start(rank, 0), count(dims);
  start[0] = row0;
  count[0] = num_rows;
  H5Sselect_hyperslab(sel.file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(),
                      nullptr);
  sel.mem_space = Id(H5Screate_simple(rank, count.data(), nullptr));
  return sel;
}

Id& Id::operator=(Id&& other) noexcept {
  if (this != &other) {
    reset();
    id_ = other.id_;
    other.id_ = H5I_INVALID_HID;
  }
  return *this;
}

void Id::reset() {
  if (id_ < 0) return;
  switch (H5Iget_type(id_)) {
    case H5I_FILE:
      H5Fclose(id_);
      break;
    case H5I_GROUP:
      H5Gclose(id_);
      break;
    case H5I_DATASET:
      H5Dclose(id_);
      break;
    case H5I_DATASPACE:
      H5Sclose(id_);
      break;
    case H5I_DATATYPE:
      H5Tclose(id_);
      break;
    case H5I_ATTR:
      H5Aclose(id_);
      break;
    case H5I_GENPROP_LST:
      H5Pclose(id_);
      break;
    default:
      break;
  }
  id_ = H5I_INVALID_HID;
}

namespace {

// The first filter of `dset`'s chunks this HDF5 cannot decode ("32000 (lzf)"), "" when none is
// missing: h5py's LZF, a plugin this build lacks, is no corrupt file.
std::string missing_filter(hid_t dset) {
  Id dcpl(H5Dget_create_plist(dset));
  const int filters = dcpl.valid() ? H5Pget_nfilters(dcpl.get()) : 0;
  for (int i = 0; i < filters; ++i) {
    unsigned flags = 0;
    size_t values = 0;
    char name[64] = "";
    const H5Z_filter_t id =
        H5Pget_filter2(dcpl.get(), i, &flags, &values, nullptr, sizeof name, name, nullptr);
    if (id >= 0 && H5Zfilter_avail(id) <= 0)
      return std::to_string(id) + (name[0] ? " (" + std::string(name) + ")" : "");
  }
  return "";
}

}  // namespace

std::runtime_error read_failure(hid_t dset, const std::string& file_name, const std::string& key) {
  int os_errno = 0;
  const std::string reason = failure_reason(&os_errno);  // before another call clears the stack
  if (const std::string filter = missing_filter(dset); !filter.empty()) {
    return std::runtime_error(where(file_name, key) + ": compressed with HDF5 filter " + filter +
                              ", which this build's HDF5 cannot decode (not a corrupt file): "
                              "save it again with gzip (h5py: compression='gzip')");
  }
  return std::runtime_error(where(file_name, key) + ": read failed (" + reason + ")" +
                            (os_errno > 0 ? "" : ": a corrupt file?"));
}

void silence_errors() {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

namespace {

// What a file that is no HDF5 file is, where it says: the two a dataset folder most often holds.
std::string what_it_is(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::file_size(path, ec) == 0 && !ec) return " (it is empty: 0 bytes)";
  std::ifstream in(path, std::ios::binary);
  std::string head(64, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  if (head.rfind("version https://git-lfs", 0) == 0)
    return " (it is a Git LFS pointer, not the data: `git lfs pull` fetches the file)";
  return "";
}

}  // namespace

Id open_for_reading(const std::string& path) {
  silence_errors();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw std::runtime_error(io::no_such(path, "file"));
  }
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw std::runtime_error(path + ": not a file (an HDF5 file was expected)");
  }
  htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
  if (is_hdf5 == 0) throw std::invalid_argument(path + ": not an HDF5 file" + what_it_is(path));
  Id file(is_hdf5 > 0 ? H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT) : H5I_INVALID_HID);
  if (!file.valid()) throw std::runtime_error(path + ": " + open_failure_reason());
  return file;
}

bool exists(hid_t loc, const std::string& path) {
  size_t pos = 0;
  while (true) {
    size_t slash = path.find('/', pos);
    std::string prefix = path.substr(0, slash);
    if (prefix.empty() || H5Lexists(loc, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    if (slash == std::string::npos) return true;
    pos = slash + 1;
  }
}

bool is_group(hid_t file, const std::string& path) {
  if (!exists(file, path)) return false;
  H5O_info_t info;
  if (H5Oget_info_by_name(file, path.c_str(), &info, H5P_DEFAULT) < 0) return false;
  return info.type == H5O_TYPE_GROUP;
}

std::vector<std::string> list_group(hid_t file, const std::string& path,
                                    const std::string& file_name) {
  Id group(H5Gopen2(file, path.empty() ? "/" : path.c_str(), H5P_DEFAULT));
  if (!group.valid()) throw std::invalid_argument(where(file_name, path) + ": not a group");
  H5G_info_t info;
  H5Gget_info(group.get(), &info);
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    ssize_t len = H5Lget_name_by_idx(group.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0,
                                     H5P_DEFAULT);
    if (len < 0) throw std::runtime_error(where(file_name, path) + ": cannot list (corrupt file?)");
    std::string name(static_cast<size_t>(len), '\0');
    H5Lget_name_by_idx(group.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), len + 1,
                       H5P_DEFAULT);
    names.push_back(name);
  }
  return names;
}

DatasetInfo describe(hid_t file, const std::string& key, const std::string& file_name) {
  Id dset = open_dataset(file, key, file_name);
  Id type(H5Dget_type(dset.get()));
  DatasetInfo info;
  info.shape = shape_of(dset.get());
  info.type_class = H5Tget_class(type.get());
  info.type_size = H5Tget_size(type.get());
  return info;
}

void read_float_rows(hid_t file, const std::string& key, int64_t row0, int64_t num_rows, float* dst,
                     const std::string& file_name) {
  Id dset = open_dataset(file, key, file_name);
  Id type(H5Dget_type(dset.get()));
  if (H5Tget_class(type.get()) != H5T_FLOAT) {
    throw std::invalid_argument(
        where(file_name, key) +
        ": expected floating-point values (float16/32/64; read as float32)");
  }
  if (num_rows == 0) return;
  RowSelection sel = select_rows(dset.get(), row0, num_rows, where(file_name, key));
  if (H5Dread(dset.get(), H5T_NATIVE_FLOAT, sel.mem_space.get(), sel.file_space.get(), H5P_DEFAULT,
              dst) < 0) {
    throw read_failure(dset.get(), file_name, key);
  }
}

std::vector<float> read_floats(hid_t file, const std::string& key, const std::string& file_name) {
  DatasetInfo info = describe(file, key, file_name);
  int64_t count = 1;
  for (int64_t d : info.shape) count *= d;
  std::vector<float> values(count);
  if (info.shape.empty()) {  // scalar: no rows to select
    Id dset = open_dataset(file, key, file_name);
    if (info.type_class != H5T_FLOAT ||
        H5Dread(dset.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0) {
      throw std::invalid_argument(where(file_name, key) + ": expected a float scalar");
    }
    return values;
  }
  read_float_rows(file, key, 0, info.shape[0], values.data(), file_name);
  return values;
}

std::string read_string(hid_t file, const std::string& key, const std::string& file_name) {
  Id dset = open_dataset(file, key, file_name);
  Id type(H5Dget_type(dset.get()));
  if (H5Tget_class(type.get()) != H5T_STRING) {
    throw std::invalid_argument(where(file_name, key) + ": expected a string");
  }
  Id space(H5Dget_space(dset.get()));
  if (H5Sget_simple_extent_npoints(space.get()) != 1) {
    throw std::invalid_argument(where(file_name, key) + ": expected a single string");
  }
  if (H5Tis_variable_str(type.get()) > 0) {
    Id mem(H5Tcopy(H5T_C_S1));
    H5Tset_size(mem.get(), H5T_VARIABLE);
    H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
    char* value = nullptr;
    if (H5Dread(dset.get(), mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &value) < 0) {
      throw std::runtime_error(where(file_name, key) + ": read failed");
    }
    std::string result = value ? value : "";
    H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, &value);
    return result;
  }
  size_t size = H5Tget_size(type.get());
  std::string value(size, '\0');
  if (H5Dread(dset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, value.data()) < 0) {
    throw std::runtime_error(where(file_name, key) + ": read failed");
  }
  value.resize(std::strlen(value.c_str()));  // fixed-length strings are null-padded
  return value;
}

int64_t read_int(hid_t file, const std::string& key, const std::string& file_name) {
  Id dset = open_dataset(file, key, file_name);
  Id type(H5Dget_type(dset.get()));
  Id space(H5Dget_space(dset.get()));
  int64_t value = 0;
  if (H5Tget_class(type.get()) != H5T_INTEGER || H5Sget_simple_extent_npoints(space.get()) != 1 ||
      H5Dread(dset.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value) < 0) {
    throw std::invalid_argument(where(file_name, key) + ": expected an integer scalar");
  }
  return value;
}

}  // namespace minrnn::data::h5
