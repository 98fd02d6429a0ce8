// Reads back the TensorBoard event files io/tensorboard.h writes, for the tests: the TFRecord
// framing with both checksums checked, and the Event fields minrnn writes. (tests/python reads
// them with TensorBoard's own reader.)
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "io/tensorboard.h"

namespace minrnn::testing {

// A summary value whose metadata names a plugin (the HParams records): not a scalar.
struct PluginRecord {
  std::string tag, plugin, content;
};

struct DecodedEvent {
  double wall_time = 0;
  int64_t step = 0;
  std::string file_version;
  bool session_start = false;
  std::vector<std::pair<std::string, float>> scalars;
  std::vector<PluginRecord> plugin_records;
};

// The fields of one protobuf message, in order: number, wire type and the varint / fixed value or
// the bytes.
class ProtoFields {
 public:
  explicit ProtoFields(std::string_view bytes) : rest_(bytes) {}
  bool next() {
    if (rest_.empty()) return false;
    const uint64_t key = varint();
    field = static_cast<int>(key >> 3);
    type = static_cast<int>(key & 7);
    if (type == 0) number = varint();
    if (type == 1 || type == 5) number = little_endian(type == 1 ? 8 : 4);
    if (type == 2) {
      const uint64_t n = varint();
      bytes = rest_.substr(0, n);
      rest_.remove_prefix(std::min<size_t>(n, rest_.size()));
    }
    return true;
  }
  int field = 0, type = 0;
  uint64_t number = 0;
  std::string_view bytes;

 private:
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; !rest_.empty(); shift += 7) {
      const auto byte = static_cast<uint8_t>(rest_.front());
      rest_.remove_prefix(1);
      v |= uint64_t(byte & 0x7f) << shift;
      if (!(byte & 0x80)) break;
    }
    return v;
  }
  uint64_t little_endian(int n) {
    uint64_t v = 0;
    for (int i = 0; i < n && !rest_.empty(); ++i) {
      v |= uint64_t(static_cast<uint8_t>(rest_.front())) << (8 * i);
      rest_.remove_prefix(1);
    }
    return v;
  }
  std::string_view rest_;
};

inline std::pair<std::string, float> decode_value(std::string_view bytes) {
  std::pair<std::string, float> scalar;
  for (ProtoFields f(bytes); f.next();) {
    if (f.field == 1) scalar.first = std::string(f.bytes);
    if (f.field == 2) {
      const auto bits = static_cast<uint32_t>(f.number);
      std::memcpy(&scalar.second, &bits, 4);
    }
  }
  return scalar;
}

// The plugin record a Summary.Value holds, or one with no plugin (a scalar).
inline PluginRecord decode_plugin_record(std::string_view bytes) {
  PluginRecord record;
  for (ProtoFields f(bytes); f.next();) {
    if (f.field == 1) record.tag = std::string(f.bytes);
    if (f.field != 9) continue;  // SummaryMetadata
    for (ProtoFields m(f.bytes); m.next();) {
      if (m.field != 1) continue;  // PluginData
      for (ProtoFields d(m.bytes); d.next();) {
        if (d.field == 1) record.plugin = std::string(d.bytes);
        if (d.field == 2) record.content = std::string(d.bytes);
      }
    }
  }
  return record;
}

inline DecodedEvent decode_event(std::string_view bytes) {
  DecodedEvent e;
  for (ProtoFields f(bytes); f.next();) {
    if (f.field == 1) std::memcpy(&e.wall_time, &f.number, 8);
    if (f.field == 2) e.step = static_cast<int64_t>(f.number);
    if (f.field == 3) e.file_version = std::string(f.bytes);
    if (f.field == 5) {
      for (ProtoFields v(f.bytes); v.next();) {
        PluginRecord record = decode_plugin_record(v.bytes);
        if (record.plugin.empty()) {
          e.scalars.push_back(decode_value(v.bytes));
        } else {
          e.plugin_records.push_back(std::move(record));
        }
      }
    }
    if (f.field == 7)
      for (ProtoFields s(f.bytes); s.next();) e.session_start = s.field == 1 && s.number == 1;
  }
  return e;
}

inline uint64_t read_le(const std::string& s, size_t at, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= uint64_t(static_cast<uint8_t>(s[at + i])) << (8 * i);
  return v;
}

// The events of one file; a bad checksum or a torn record fails the test.
inline std::vector<DecodedEvent> read_event_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string file = ss.str();
  std::vector<DecodedEvent> events;
  for (size_t at = 0; at < file.size();) {
    if (file.size() - at < 12) {
      ADD_FAILURE() << path << ": a torn record header at byte " << at;
      break;
    }
    const uint64_t n = read_le(file, at, 8);
    EXPECT_EQ(read_le(file, at + 8, 4), io::masked_crc32c(file.substr(at, 8))) << path;
    if (file.size() - at - 12 < n + 4) {
      ADD_FAILURE() << path << ": a torn record at byte " << at;
      break;
    }
    const std::string data = file.substr(at + 12, n);
    EXPECT_EQ(read_le(file, at + 12 + n, 4), io::masked_crc32c(data)) << path;
    events.push_back(decode_event(data));
    at += 12 + n + 4;
  }
  return events;
}

// The event files of `dir`, in the order TensorBoard reads them (by name).
inline std::vector<std::filesystem::path> event_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().rfind("events.out.tfevents.", 0) == 0)
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace minrnn::testing
