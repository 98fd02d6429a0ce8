#include "io/tensorboard.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <variant>

#include "io/shell_word.h"

namespace minrnn::io {
namespace {

constexpr char kEventFilePrefix[] = "events.out.tfevents.";

std::array<uint32_t, 256> crc32c_table() {
  constexpr uint32_t kReflectedCastagnoli = 0x82f63b78;
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? kReflectedCastagnoli : 0);
    table[i] = crc;
  }
  return table;
}

// Protobuf's wire format, the field types an Event needs. Byte by byte, so the output is
// little-endian whatever the machine is.
enum WireType { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

void put_varint(std::string& out, uint64_t v) {
  for (; v >= 0x80; v >>= 7) out += static_cast<char>((v & 0x7f) | 0x80);
  out += static_cast<char>(v);
}

void put_little_endian(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

void put_key(std::string& out, int field, WireType type) {
  put_varint(out, static_cast<uint64_t>(field) << 3 | type);
}

void put_double(std::string& out, int field, double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  put_key(out, field, kFixed64);
  put_little_endian(out, bits, 8);
}

void put_float(std::string& out, int field, float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  put_key(out, field, kFixed32);
  put_little_endian(out, bits, 4);
}

void put_int64(std::string& out, int field, int64_t value) {
  put_key(out, field, kVarint);
  put_varint(out, static_cast<uint64_t>(value));  // negative: ten bytes, as protobuf writes it
}

void put_bytes(std::string& out, int field, std::string_view bytes) {
  put_key(out, field, kLengthDelimited);
  put_varint(out, bytes.size());
  out.append(bytes.data(), bytes.size());
}

// Event fields.
enum EventField { kWallTime = 1, kStep = 2, kFileVersion = 3, kSummary = 5, kSessionLog = 7 };

std::string event_header(double wall_time, int64_t step) {
  std::string event;
  put_double(event, kWallTime, wall_time);
  if (step != 0) put_int64(event, kStep, step);  // proto3: a default value is not written
  return event;
}

std::string summary_value(const TensorBoardScalar& scalar) {
  std::string value;
  put_bytes(value, 1, scalar.tag);
  put_float(value, 2, static_cast<float>(scalar.value));
  return value;
}

// An Event holding `summary` (a serialized Summary) at `step`.
std::string summary_event(int64_t step, double wall_time, const std::string& summary) {
  std::string event = event_header(wall_time, step);
  put_bytes(event, kSummary, summary);
  return event;
}

std::string hparams_value(const HParam& p) {  // google.protobuf.Value
  std::string value;
  if (const double* number = std::get_if<double>(&p.value)) {
    put_double(value, 2, *number);  // number_value
  } else {
    put_bytes(value, 3, std::get<std::string>(p.value));  // string_value
  }
  return value;
}

// An HParams plugin record (tensorboard/plugins/hparams: plugin_data.proto, metadata.py): a
// Summary.Value whose metadata names the plugin and holds `plugin_data` (an HParamsPluginData of
// version 0), its tensor the plugin's NULL_TENSOR (float, shape [0]).
std::string hparams_event(const std::string& tag, const std::string& plugin_data,
                          double wall_time) {
  std::string plugin;  // SummaryMetadata.PluginData
  put_bytes(plugin, 1, "hparams");
  put_bytes(plugin, 2, plugin_data);
  std::string metadata;
  put_bytes(metadata, 1, plugin);
  std::string shape;        // TensorShapeProto
  put_bytes(shape, 2, "");  // dim { size: 0 }
  std::string tensor;       // TensorProto
  put_int64(tensor, 1, 1);  // dtype: DT_FLOAT
  put_bytes(tensor, 2, shape);
  std::string value;  // Summary.Value
  put_bytes(value, 1, tag);
  put_bytes(value, 8, tensor);
  put_bytes(value, 9, metadata);
  std::string summary;
  put_bytes(summary, 1, value);
  return summary_event(0, wall_time, summary);
}

std::string hostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

// The <unix seconds> of the event files in `dir` that have one; -1 when there are none.
long long latest_event_file_seconds(const std::string& dir) {
  long long latest = -1;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(kEventFilePrefix, 0) != 0) continue;
    const char* digits = name.c_str() + std::strlen(kEventFilePrefix);
    char* after = nullptr;
    const long long seconds = std::strtoll(digits, &after, 10);
    if (after != digits) latest = std::max(latest, seconds);
  }
  return latest;
}

}  // namespace

uint32_t crc32c(std::string_view data) {
  static const std::array<uint32_t, 256> table = crc32c_table();
  uint32_t crc = 0xffffffff;
  for (const char c : data) crc = table[(crc ^ static_cast<uint8_t>(c)) & 0xff] ^ (crc >> 8);
  return crc ^ 0xffffffff;
}

uint32_t masked_crc32c(std::string_view data) {
  const uint32_t crc = crc32c(data);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8;
}

std::string tfrecord(std::string_view data) {
  std::string length;
  put_little_endian(length, data.size(), 8);
  std::string record = length;
  put_little_endian(record, masked_crc32c(length), 4);
  record.append(data.data(), data.size());
  put_little_endian(record, masked_crc32c(data), 4);
  return record;
}

std::string file_version_event(double wall_time) {
  std::string event = event_header(wall_time, 0);
  put_bytes(event, kFileVersion, "brain.Event:2");
  return event;
}

std::string scalars_event(int64_t step, double wall_time,
                          const std::vector<TensorBoardScalar>& values) {
  std::string summary;
  for (const auto& scalar : values) put_bytes(summary, 1, summary_value(scalar));
  return summary_event(step, wall_time, summary);
}

std::string session_start_event(int64_t step, double wall_time) {
  std::string session_log;
  put_key(session_log, 1, kVarint);  // status
  put_varint(session_log, 1);        // START
  std::string event = event_header(wall_time, step);
  put_bytes(event, kSessionLog, session_log);
  return event;
}

std::string hparams_start_event(const std::vector<HParam>& hparams, const std::string& group,
                                double wall_time) {
  std::string start;  // SessionStartInfo
  for (const HParam& p : hparams) {
    std::string entry;  // map<string, Value> entry
    put_bytes(entry, 1, p.name);
    put_bytes(entry, 2, hparams_value(p));
    put_bytes(start, 1, entry);
  }
  put_bytes(start, 4, group);
  put_double(start, 5, wall_time);  // start_time_secs
  std::string data;                 // HParamsPluginData, version 0 (not written)
  put_bytes(data, 3, start);
  return hparams_event("_hparams_/session_start_info", data, wall_time);
}

std::string hparams_end_event(bool success, double wall_time) {
  std::string end;                     // SessionEndInfo
  put_int64(end, 1, success ? 1 : 2);  // STATUS_SUCCESS, STATUS_FAILURE
  put_double(end, 2, wall_time);       // end_time_secs
  std::string data;
  put_bytes(data, 4, end);
  return hparams_event("_hparams_/session_end_info", data, wall_time);
}

std::string watch_line(const std::string& logdir) {
  return "watch it: tensorboard --logdir " + shell_word(logdir);
}

double wall_time_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string new_event_file_path(const std::string& dir) {
  const long long now = static_cast<long long>(wall_time_now());
  const long long seconds = std::max(now, latest_event_file_seconds(dir) + 1);
  const std::string name = kEventFilePrefix + std::to_string(seconds) + "." + hostname();
  return (std::filesystem::path(dir) / name).string();
}

EventFileWriter::EventFileWriter(const std::string& dir) : file_(new_event_file_path(dir)) {
  write_event(file_version_event(wall_time_now()));
}

void EventFileWriter::add_scalar(const std::string& tag, int64_t step, double value,
                                 double wall_time) {
  add_scalars(step, {{tag, value}}, wall_time);
}

void EventFileWriter::add_scalars(int64_t step, const std::vector<TensorBoardScalar>& values,
                                  double wall_time) {
  write_event(scalars_event(step, wall_time, values));
}

void EventFileWriter::add_session_start(int64_t step, double wall_time) {
  write_event(session_start_event(step, wall_time));
}

void EventFileWriter::add_hparams_start(const std::vector<HParam>& hparams,
                                        const std::string& group, double wall_time) {
  write_event(hparams_start_event(hparams, group, wall_time));
}

void EventFileWriter::add_hparams_end(bool success, double wall_time) {
  write_event(hparams_end_event(success, wall_time));
}

}  // namespace minrnn::io
