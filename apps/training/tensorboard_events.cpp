// See tensorboard_events.hpp.
#include "apps/training/tensorboard_events.hpp"

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include <unistd.h>

#include <fmt/core.h>

#include "core/error.hpp"
#include "data/little_endian.hpp"

namespace attn::app {
namespace {

// The 256 CRC-32C remainders of one byte, reflected (least significant bit first).
constexpr std::array<uint32_t, 256> crc32c_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t byte = 0; byte < 256; ++byte) {
    uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? 0x82F63B78u : 0u);
    table[byte] = crc;
  }
  return table;
}

// Protocol buffers' wire format (proto3): a field's key is (number << 3) | wire type, a varint;
// fields in the order of their numbers, as protobuf writes them.
enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

void append_varint(std::string& out, uint64_t value) {
  for (; value >= 0x80; value >>= 7) out.push_back(char((value & 0x7F) | 0x80));
  out.push_back(char(value));
}

void append_key(std::string& out, uint32_t field, WireType type) {
  append_varint(out, (uint64_t(field) << 3) | type);
}

void append_bytes(std::string& out, uint32_t field, std::string_view bytes) {
  append_key(out, field, kLengthDelimited);
  append_varint(out, bytes.size());
  out.append(bytes);
}

// Event { double wall_time = 1; int64 step = 2; string file_version = 3; Summary summary = 5; }
std::string event_with_summary(double wall_time, int64_t step, const std::string& summary_value) {
  std::string summary;  // Summary { repeated Value value = 1; }
  append_bytes(summary, 1, summary_value);
  std::string event;
  append_key(event, 1, kFixed64);
  data::append_little_endian(event, wall_time);
  if (step != 0) {  // proto3 leaves out a field at its default
    append_key(event, 2, kVarint);
    append_varint(event, uint64_t(step));  // int64: two's complement, ten bytes when negative
  }
  append_bytes(event, 5, summary);
  return event;
}

double seconds_since_epoch() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

uint32_t crc32c(std::string_view bytes) {
  static constexpr std::array<uint32_t, 256> kTable = crc32c_table();
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char byte : bytes) crc = (crc >> 8) ^ kTable[(crc ^ byte) & 0xFF];
  return crc ^ 0xFFFFFFFFu;
}

uint32_t masked_crc32c(std::string_view bytes) {
  const uint32_t crc = crc32c(bytes);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

std::string tf_record(std::string_view payload) {
  std::string length;
  data::append_little_endian(length, uint64_t(payload.size()));
  std::string record = length;
  data::append_little_endian(record, masked_crc32c(length));
  record.append(payload);
  data::append_little_endian(record, masked_crc32c(payload));
  return record;
}

std::string file_version_event(double wall_time) {
  std::string event;
  append_key(event, 1, kFixed64);
  data::append_little_endian(event, wall_time);
  append_bytes(event, 3, "brain.Event:2");
  return event;
}

// Summary.Value { string tag = 1; float simple_value = 2; }
std::string scalar_event(double wall_time, int64_t step, std::string_view tag, float value) {
  std::string summary_value;
  append_bytes(summary_value, 1, tag);
  append_key(summary_value, 2, kFixed32);
  data::append_little_endian(summary_value, value);
  return event_with_summary(wall_time, step, summary_value);
}

// Summary.Value { string tag = 1; TensorProto tensor = 8; SummaryMetadata metadata = 9; } with
// SummaryMetadata { PluginData plugin_data = 1 { string plugin_name = 1; } } naming the text
// plugin, and TensorProto { DataType dtype = 1 (DT_STRING = 7); TensorShapeProto tensor_shape = 2
// { repeated Dim dim = 2 { int64 size = 1; } }; repeated bytes string_val = 8; }: one string, shape [1].
std::string text_event(double wall_time, int64_t step, std::string_view tag, std::string_view text) {
  std::string plugin_data, metadata, dimension, shape, tensor, summary_value;
  append_bytes(plugin_data, 1, "text");
  append_bytes(metadata, 1, plugin_data);
  append_key(dimension, 1, kVarint);
  append_varint(dimension, 1);
  append_bytes(shape, 2, dimension);
  append_key(tensor, 1, kVarint);
  append_varint(tensor, 7);
  append_bytes(tensor, 2, shape);
  append_bytes(tensor, 8, text);
  append_bytes(summary_value, 1, tag);
  append_bytes(summary_value, 8, tensor);
  append_bytes(summary_value, 9, metadata);
  return event_with_summary(wall_time, step, summary_value);
}

TensorBoardEventFile::TensorBoardEventFile(const std::string& folder) {
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  ATTN_CHECK(!error, "tensorboard: cannot create the folder {}: {}", folder, error.message());
  std::array<char, 256> host{};
  if (::gethostname(host.data(), host.size() - 1) != 0) std::strcpy(host.data(), "localhost");
  static std::atomic<int> files_opened{0};
  const double now = seconds_since_epoch();
  path_ = (std::filesystem::path(folder) /
           fmt::format("events.out.tfevents.{:010d}.{}.{}.{}", int64_t(now), host.data(), ::getpid(), files_opened++))
              .string();
  out_.open(path_, std::ios::binary | std::ios::app);
  ATTN_CHECK(out_.good(), "tensorboard: cannot create the event file {}: {}", path_, std::strerror(errno));
  write(file_version_event(now));
}

void TensorBoardEventFile::add_scalar(std::string_view tag, double value, int64_t step) {
  write(scalar_event(seconds_since_epoch(), step, tag, float(value)));
}

void TensorBoardEventFile::add_text(std::string_view tag, std::string_view text, int64_t step) {
  write(text_event(seconds_since_epoch(), step, tag, text));
}

void TensorBoardEventFile::write(const std::string& event) {
  out_ << tf_record(event);
  out_.flush();
  ATTN_CHECK(out_.good(), "tensorboard: cannot write the event file {}: {}", path_, std::strerror(errno));
}

}  // namespace attn::app
