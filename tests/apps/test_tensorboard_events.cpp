// Tests of apps/training/tensorboard_events and tensorboard_log (train --tensorboard-logdir):
// CRC-32C's check value and TFRecord's mask; the Event messages byte for byte against their
// encoding worked out by hand from protobuf's wire format; the framing read back; an event file's
// name and first record; the training log's records as scalars in fairseq's runs and names.
#include <catch.hpp>

#include <filesystem>

#include "apps/training/tensorboard_events.hpp"
#include "apps/training/tensorboard_log.hpp"
#include "core/error.hpp"
#include "data/little_endian.hpp"
#include "test_support.hpp"

using namespace attn;
using namespace attn::app;
namespace fs = std::filesystem;

namespace {

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(char(v));
  return out;
}

// The payloads of the TFRecords in `file`, their lengths and checksums verified.
std::vector<std::string> records_of(const std::string& file) {
  const std::string data = test::read_file(file);
  std::vector<std::string> records;
  for (size_t pos = 0; pos < data.size();) {
    REQUIRE(pos + 12 <= data.size());
    const uint64_t length = data::load_little_endian<uint64_t>(data.data() + pos);
    CHECK(data::load_little_endian<uint32_t>(data.data() + pos + 8) == masked_crc32c(data.substr(pos, 8)));
    REQUIRE(pos + 16 + length <= data.size());
    records.push_back(data.substr(pos + 12, length));
    CHECK(data::load_little_endian<uint32_t>(data.data() + pos + 12 + length) == masked_crc32c(records.back()));
    pos += 16 + length;
  }
  return records;
}

// The event files of a run folder.
std::vector<std::string> event_files(const fs::path& folder) {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(folder)) files.push_back(entry.path().string());
  return files;
}

}  // namespace

TEST_CASE("crc32c gives the check value of CRC-32C, and the mask is TFRecord's") {
  CHECK(crc32c("123456789") == 0xE3069283u);  // the catalogued check value of CRC-32C (iSCSI)
  CHECK(crc32c("") == 0u);
  const uint32_t crc = crc32c("123456789");
  CHECK(masked_crc32c("123456789") == uint32_t(((crc >> 15) | (crc << 17)) + 0xa282ead8u));
}

TEST_CASE("a scalar event is Event{wall_time, step, summary{value{tag, simple_value}}} in protobuf's bytes") {
  // wall_time 1.5: key 1 fixed64 (0x09), the double; step 7: key 2 varint (0x10), 7; summary:
  // key 5 length-delimited (0x2A), 13 bytes: value, key 1 (0x0A), 11 bytes: tag "loss" (0x0A 4 ...),
  // simple_value 2.0f: key 2 fixed32 (0x15), the float.
  const std::string expected = bytes({0x09, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F, 0x10, 7, 0x2A, 13, 0x0A, 11, 0x0A, 4}) +
                               "loss" + bytes({0x15, 0, 0, 0, 0x40});
  CHECK(scalar_event(1.5, 7, "loss", 2.0f) == expected);
  // Step 300 is a two-byte varint (0xAC 0x02); step 0 is left out, as proto3 leaves out defaults.
  CHECK(scalar_event(1.5, 300, "loss", 2.0f).substr(9, 3) == bytes({0x10, 0xAC, 0x02}));
  CHECK(scalar_event(1.5, 0, "loss", 2.0f) == expected.substr(0, 9) + expected.substr(11));
}

TEST_CASE("the file version event and a text event for TensorBoard's text plugin") {
  CHECK(file_version_event(1.5) == bytes({0x09, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F, 0x1A, 13}) + "brain.Event:2");
  // Value{tag 1 "t", tensor 8 {dtype 1: 7 (DT_STRING), tensor_shape 2 {dim 2 {size 1: 1}},
  // string_val 8 "ab"}, metadata 9 {plugin_data 1 {plugin_name 1 "text"}}}.
  const std::string value = bytes({0x0A, 1}) + "t" + bytes({0x42, 12, 0x08, 7, 0x12, 4, 0x12, 2, 0x08, 1, 0x42, 2}) +
                            "ab" + bytes({0x4A, 8, 0x0A, 6, 0x0A, 4}) + "text";
  CHECK(text_event(1.5, 2, "t", "ab") ==
        bytes({0x09, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F, 0x10, 2, 0x2A, char(value.size() + 2), 0x0A, char(value.size())}) +
            value);
}

TEST_CASE("a TFRecord is the length, its masked CRC, the payload and its masked CRC") {
  const std::string record = tf_record("abc");
  REQUIRE(record.size() == 8 + 4 + 3 + 4);
  CHECK(data::load_little_endian<uint64_t>(record.data()) == 3);
  CHECK(data::load_little_endian<uint32_t>(record.data() + 8) == masked_crc32c(record.substr(0, 8)));
  CHECK(record.substr(12, 3) == "abc");
  CHECK(data::load_little_endian<uint32_t>(record.data() + 15) == masked_crc32c("abc"));
}

TEST_CASE("an event file is named as TensorBoard looks for it and starts with the file version") {
  test::TempDir dir;
  TensorBoardEventFile file(dir.file("runs/train"));  // the folder is created
  file.add_scalar("loss", 3.25, 10);
  const std::string name = fs::path(file.path()).filename().string();
  CHECK(name.starts_with("events.out.tfevents."));
  const std::vector<std::string> records = records_of(file.path());
  REQUIRE(records.size() == 2);
  CHECK(records[0].ends_with(bytes({0x1A, 13}) + "brain.Event:2"));
  CHECK(records[1].substr(9) == scalar_event(0, 10, "loss", 3.25f).substr(9));  // all but the wall time
  test::write_file(dir.file("a-file"), "");
  CHECK_THROWS_WITH(TensorBoardEventFile(dir.file("a-file/run")), Catch::Contains("a-file"));
}

TEST_CASE("the training log's records become scalars in fairseq's runs, under fairseq's names") {
  test::TempDir dir;
  TensorBoardLog log(dir.file("tb"));
  log.write({{"type", "train"},
             {"epoch", 1},
             {"update", 20},
             {"loss", 9.5},
             {"tokens_per_second", 1000.0},
             {"elapsed", 2.0}});
  log.write({{"type", "valid"}, {"subset", "valid1"}, {"epoch", 1}, {"update", 20}, {"bleu", 3.5}});
  log.write({{"type", "done"}, {"reason", "reached --max-update 20"}, {"update", 20}});  // no scalars
  const std::vector<std::string> train = event_files(dir.dir / "tb" / "train_inner");
  const std::vector<std::string> valid = event_files(dir.dir / "tb" / "valid1");
  REQUIRE(train.size() == 1);
  REQUIRE(valid.size() == 1);
  CHECK(event_files(dir.dir / "tb").size() == 2);                              // nothing for the done record
  const auto tail = [](const std::string& event) { return event.substr(9); };  // without the wall time
  const std::vector<std::string> train_records = records_of(train[0]), valid_records = records_of(valid[0]);
  REQUIRE(train_records.size() == 2 + 3);  // version, command line, three scalars (not epoch or update)
  CHECK(train_records[1].find("sys.argv/text_summary") != std::string::npos);
  CHECK(tail(train_records[2]) == tail(scalar_event(0, 20, "wall", 2.0f)));  // the fields in name order
  CHECK(tail(train_records[3]) == tail(scalar_event(0, 20, "loss", 9.5f)));
  CHECK(tail(train_records[4]) == tail(scalar_event(0, 20, "wps", 1000.0f)));
  REQUIRE(valid_records.size() == 3);
  CHECK(tail(valid_records[2]) == tail(scalar_event(0, 20, "bleu", 3.5f)));
}
