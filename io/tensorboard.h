// TensorBoard event files (what `tensorboard --logdir` reads), written by hand: a TFRecord per
// Event message: scalars, and the HParams plugin's records of a run.
//
// A TFRecord is: the data's length (uint64, little-endian), the masked CRC32C of those 8 bytes,
// the data, the masked CRC32C of the data. The data is a serialized tensorboard `Event`:
//   Event      { double wall_time = 1; int64 step = 2; string file_version = 3;
//                Summary summary = 5; SessionLog session_log = 7; }
//   Summary    { repeated Value value = 1; }   Value { string tag = 1; float simple_value = 2; }
//   SessionLog { SessionStatus status = 1; }   (START = 1)
// and, for the HParams plugin's records, Value { ...; TensorProto tensor = 8;
// SummaryMetadata metadata = 9 } with the plugin's name and its HParamsPluginData.
// The few fields are encoded here directly: a protobuf library (and its generated code) would be
// heavier than the format itself.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "io/atomic_file.h"

namespace minrnn::io {

// CRC-32C (Castagnoli), the checksum TFRecord uses; crc32c("123456789") == 0xe3069283.
uint32_t crc32c(std::string_view data);
// TFRecord's masked form of crc32c: ((crc >> 15) | (crc << 17)) + 0xa282ead8.
uint32_t masked_crc32c(std::string_view data);
// `data` framed as one TFRecord.
std::string tfrecord(std::string_view data);

struct TensorBoardScalar {
  std::string tag;
  double value = 0;  // stored as float32, as TensorBoard's simple_value is
};

// Serialized Event messages.
std::string file_version_event(double wall_time);  // file_version "brain.Event:2"
std::string scalars_event(int64_t step, double wall_time,
                          const std::vector<TensorBoardScalar>& values);
// SessionLog START at `step`: TensorBoard's readers drop the run's earlier events of steps >= step
// (a restarted job redoes them).
std::string session_start_event(int64_t step, double wall_time);

// A run's hyper-parameter as TensorBoard's HParams dashboard shows it: a number, or else text.
struct HParam {
  using Value = std::variant<double, std::string>;
  std::string name;
  Value value;
};
// The HParams plugin's records (tags _hparams_/session_start_info and _hparams_/session_end_info):
// the run is a session with these hyper-parameters, in `group` — the dashboard shows a group's
// sessions (a configuration's seeds) as one row, their metrics aggregated —; and it ended.
std::string hparams_start_event(const std::vector<HParam>& hparams, const std::string& group,
                                double wall_time);
std::string hparams_end_event(bool success, double wall_time);

// What `train` and `sweep` say as their runs start: "watch it: tensorboard --logdir LOGDIR".
std::string watch_line(const std::string& logdir);

// Seconds since the epoch, the wall_time of events.
double wall_time_now();

// A new event file in `dir`: events.out.tfevents.<unix seconds>.<hostname>, TensorBoard's naming.
// Readers take a directory's event files in the order of their names, so <unix seconds> is made
// later than that of every event file already there (a resume within the same second, or on a
// node whose clock is behind, still sorts after the run it continues). Append-only, one write per
// record: a kill can tear at most the last record, which TensorBoard's readers skip, and a failed
// write is taken back (io::AppendFile) and thrown as WriteError naming the file.
class EventFileWriter {
 public:
  explicit EventFileWriter(const std::string& dir);  // writes the file_version event
  void add_scalar(const std::string& tag, int64_t step, double value, double wall_time);
  // Several scalars of one step, in one record.
  void add_scalars(int64_t step, const std::vector<TensorBoardScalar>& values, double wall_time);
  void add_session_start(int64_t step, double wall_time);
  void add_hparams_start(const std::vector<HParam>& hparams, const std::string& group,
                         double wall_time);
  void add_hparams_end(bool success, double wall_time);
  const std::string& path() const { return file_.path(); }

 private:
  void write_event(const std::string& event) { file_.append(tfrecord(event)); }
  AppendFile file_;
};

// The path a new EventFileWriter in `dir` would take.
std::string new_event_file_path(const std::string& dir);

}  // namespace minrnn::io
