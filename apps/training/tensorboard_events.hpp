// TensorBoard's event files, written without TensorFlow: the files `SummaryWriter` writes and
// TensorBoard reads from a run's folder (docs/design.md §6). A file is a sequence of records
// (TFRecord framing: the length as uint64, its masked CRC-32C, the bytes, their masked CRC-32C;
// little-endian), each record one `Event` protocol buffer: the first holds the file version
// "brain.Event:2", each later one a wall time, a step and a `Summary` with one value — a scalar
// (`simple_value`) or a text (a string tensor for TensorBoard's text plugin). The messages are
// encoded by hand: a few fields of proto3's wire format.
#pragma once
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>

namespace attn::app {

// CRC-32C (Castagnoli, the reflected polynomial 0x82F63B78) of `bytes`, and TFRecord's mask of a
// CRC: ((crc >> 15) | (crc << 17)) + 0xa282ead8.
uint32_t crc32c(std::string_view bytes);
uint32_t masked_crc32c(std::string_view bytes);

// `payload` framed as one TFRecord.
std::string tf_record(std::string_view payload);

// The encoded Event messages this writer writes (tested byte by byte).
std::string file_version_event(double wall_time);
std::string scalar_event(double wall_time, int64_t step, std::string_view tag, float value);
std::string text_event(double wall_time, int64_t step, std::string_view tag, std::string_view text);

class TensorBoardEventFile {
 public:
  // A new event file in `folder` (created when missing), named as TensorBoard expects:
  // events.out.tfevents.<seconds since the epoch>.<host>.<process id>.<n>; its first record the
  // file version. Throws (attn::Error) naming the file when it cannot be created.
  explicit TensorBoardEventFile(const std::string& folder);

  // One scalar, or one text, at `step`, time-stamped now and flushed to the file at once (a
  // TensorBoard watching the folder sees it); a failed write throws naming the file.
  void add_scalar(std::string_view tag, double value, int64_t step);
  void add_text(std::string_view tag, std::string_view text, int64_t step);

  const std::string& path() const { return path_; }

 private:
  void write(const std::string& event);

  std::string path_;
  std::ofstream out_;
};

}  // namespace attn::app
