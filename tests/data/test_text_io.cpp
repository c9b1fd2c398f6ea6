// Text files: the partial last line an interrupted appender leaves is cut, whole lines kept;
// positions in UTF-8 text are moved back to the start of their code point; a folder or file
// that cannot be made gives an error naming it and who asked for it; files written together
// land all or none, through links and onto devices, keeping their permissions; a folder is no
// input file, and a read error is reported with its reason.
#include <catch.hpp>

#include <filesystem>
#include <string>

#include "data/text_io.hpp"
#include "test_support.hpp"

using attn::data::cut_partial_last_line;
using attn::test::TempDir;

namespace {

std::string contents_after_cut(TempDir& tmp, const std::string& text, size_t expected_cut) {
  const std::string path = attn::test::write_file(tmp.dir / "log.jsonl", text);
  CHECK(cut_partial_last_line(path) == expected_cut);
  return attn::test::read_file(path);
}

}  // namespace

TEST_CASE("cut_partial_last_line keeps whole lines and cuts a torn last one", "[text_io]") {
  TempDir tmp;
  CHECK(contents_after_cut(tmp, "{\"a\": 1}\n{\"a\": 2}\n", 0) == "{\"a\": 1}\n{\"a\": 2}\n");
  CHECK(contents_after_cut(tmp, "{\"a\": 1}\n{\"a\": 2}\n{\"typ", 5) == "{\"a\": 1}\n{\"a\": 2}\n");
  CHECK(contents_after_cut(tmp, "{\"typ", 5).empty());
  CHECK(contents_after_cut(tmp, "", 0).empty());
  // A torn line longer than the block the search reads at a time.
  const std::string whole = "{\"a\": 1}\n";
  CHECK(contents_after_cut(tmp, whole + std::string(10000, 'x'), 10000) == whole);
  CHECK(cut_partial_last_line((tmp.dir / "missing.jsonl").string()) == 0);
}

TEST_CASE("code_point_start moves a byte position back to the first byte of its code point", "[text_io]") {
  const std::string text = "a\xC3\xA9\xE2\x82\xAC" "b";  // a, é (2 bytes), € (3 bytes), b
  CHECK(attn::data::code_point_start(text, 0) == 0);
  CHECK(attn::data::code_point_start(text, 1) == 1);
  CHECK(attn::data::code_point_start(text, 2) == 1);
  CHECK(attn::data::code_point_start(text, 3) == 3);
  CHECK(attn::data::code_point_start(text, 5) == 3);
  CHECK(attn::data::code_point_start(text, 6) == 6);
  CHECK(attn::data::code_point_start("\x80\x80", 1) == 0);  // never before the start
}

TEST_CASE("create_folders makes missing parents and names the folder and its flag when it cannot", "[text_io]") {
  TempDir tmp;
  const std::string nested = (tmp.dir / "a" / "b" / "c").string();
  attn::data::create_folders(nested, "--out");
  CHECK(std::filesystem::is_directory(nested));
  attn::data::create_folders(nested, "--out");  // an existing folder is fine
  const std::string file = attn::test::write_file(tmp.dir / "plain_file", "x");
  const std::string under_file = file + "/sub";
  CHECK_THROWS_WITH(attn::data::create_folders(under_file, "--save-dir"),
                    Catch::StartsWith(under_file + " (--save-dir): cannot create the folder: "));
}

TEST_CASE("write_file_atomic names the file it was asked to write when it cannot", "[text_io]") {
  TempDir tmp;
  const std::string path = (tmp.dir / "missing_folder" / "out.txt").string();
  CHECK_THROWS_WITH(attn::data::write_file_atomic(path, "text"), Catch::StartsWith(path + ": cannot write"));
  CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("OutputFiles writes all its files at the commit, or none when it is not committed", "[text_io]") {
  TempDir tmp;
  const std::string first = attn::test::write_file(tmp.dir / "out.en", "old en\n");
  const std::string second = attn::test::write_file(tmp.dir / "out.de", "old de\n");
  {
    attn::data::OutputFiles outputs;
    outputs.add(first, "new en\n");
    outputs.add(second, "new de\n");
    CHECK(attn::test::read_file(first) == "old en\n");  // staged, not yet in place
  }  // an error between add and commit: the outputs are as they were, no temp file is left
  CHECK(attn::test::read_file(first) == "old en\n");
  CHECK(std::distance(std::filesystem::directory_iterator(tmp.dir), {}) == 2);
  attn::data::OutputFiles outputs;
  outputs.add(first, "new en\n");
  outputs.add(second, "new de\n");
  outputs.commit();
  CHECK(attn::test::read_file(first) == "new en\n");
  CHECK(attn::test::read_file(second) == "new de\n");
}

TEST_CASE("OutputFiles stages a file its writer writes, and removes it when the writer fails", "[text_io]") {
  TempDir tmp;
  const std::string file = attn::test::write_file(tmp.dir / "weights", "old\n");
  {
    attn::data::OutputFiles outputs;
    CHECK_THROWS_WITH(outputs.add_written(file,
                                          [](const std::string& temp) {
                                            attn::test::write_file(temp, "half");
                                            throw attn::data::DataError("disk full");
                                          }),
                      "disk full");
  }
  CHECK(attn::test::read_file(file) == "old\n");
  CHECK(std::distance(std::filesystem::directory_iterator(tmp.dir), {}) == 1);  // no temp file left
  attn::data::OutputFiles outputs;
  outputs.add_written(file, [](const std::string& temp) { attn::test::write_file(temp, "new\n"); });
  CHECK(attn::test::read_file(file) == "old\n");  // staged, not yet in place
  outputs.commit();
  CHECK(attn::test::read_file(file) == "new\n");
  CHECK_THROWS_WITH(outputs.add_written("/dev/null", [](const std::string&) {}),
                    Catch::Contains("/dev/null: is not a regular file"));
}

TEST_CASE("OutputFiles refuses a folder in a file's place and a file named twice before writing any", "[text_io]") {
  TempDir tmp;
  const std::string file = attn::test::write_file(tmp.dir / "out.en", "old\n");
  std::filesystem::create_directory(tmp.dir / "out.de");
  attn::data::OutputFiles outputs;
  outputs.add(file, "new\n");
  CHECK_THROWS_WITH(outputs.add(tmp.file("out.de"), "new\n"), tmp.file("out.de") + ": is a folder, not a file");
  CHECK_THROWS_WITH(outputs.add(tmp.file("./out.en"), "again\n"),
                    tmp.file("./out.en") + ": named twice as an output (also as " + file + ")");
  std::filesystem::create_symlink("out.en", tmp.dir / "link");
  CHECK_THROWS_WITH(outputs.add(tmp.file("link"), "again\n"), Catch::Contains("named twice as an output"));
  CHECK(attn::test::read_file(file) == "old\n");
}

TEST_CASE("write_file_atomic replaces the file behind a link and keeps its permissions; a device is written as it is",
          "[text_io]") {
  TempDir tmp;
  const std::string target = attn::test::write_file(tmp.dir / "private.txt", "old\n");
  std::filesystem::permissions(target, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  std::filesystem::create_symlink("private.txt", tmp.dir / "link");
  attn::data::write_file_atomic(tmp.file("link"), "new\n");
  CHECK(std::filesystem::is_symlink(tmp.dir / "link"));
  CHECK(attn::test::read_file(target) == "new\n");
  CHECK(std::filesystem::status(target).permissions() ==
        (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));
  attn::data::write_file_atomic("/dev/null", "discarded\n");  // not replaced by a regular file
  CHECK(std::filesystem::is_character_file("/dev/null"));
  CHECK_THROWS_WITH(attn::data::write_file_atomic("/dev/full", "x"), Catch::StartsWith("/dev/full: write failed: "));
}

TEST_CASE("read_lines refuses a folder, which would read as an empty file", "[text_io]") {
  TempDir tmp;
  CHECK_THROWS_WITH(attn::data::read_lines(tmp.dir.string()), tmp.dir.string() + ": is a folder, not a file");
}

TEST_CASE("read_lines names the reason of a read error", "[text_io]") {
  // Offset 0 of a process's memory is never mapped: the first read fails with EIO.
  CHECK_THROWS_WITH(attn::data::read_lines("/proc/self/mem"), "/proc/self/mem: read failed: Input/output error");
}
