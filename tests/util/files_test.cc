// Whole-file reading: a user's input may be a pipe and is read to its end;
// a file Seam wrote itself is read only when a regular file is still there
// (a FIFO put in its place would block the open forever).
#include "seam/util/files.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "../common/scratch_directory.h"
#include "gtest/gtest.h"

namespace seam {
namespace {

namespace fs = std::filesystem;

class FilesTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  seam::testing::ScratchDirectory scratch_{"seam_files"};
  const fs::path dir_ = scratch_.path();
};

// Every byte as it is: NULs, bytes that are not UTF-8, no final newline.
const std::string kBytes = std::string("a\0b\xff\xfe\r\nz", 8);

TEST_F(FilesTest, BothReadEveryByteOfARegularFile) {
  ASSERT_TRUE(WriteFile(Path("f"), kBytes).ok());
  for (auto read : {ReadFile, ReadRegularFile}) {
    absl::StatusOr<std::string> bytes = read(Path("f"));
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    EXPECT_EQ(*bytes, kBytes);
  }
}

TEST_F(FilesTest, BothSayAMissingFileIsNotFound) {
  for (auto read : {ReadFile, ReadRegularFile}) {
    absl::StatusOr<std::string> bytes = read(Path("missing"));
    EXPECT_EQ(bytes.status().code(), absl::StatusCode::kNotFound) << bytes.status();
    EXPECT_NE(bytes.status().message().find(Path("missing")), std::string::npos);
  }
}

TEST_F(FilesTest, BothRefuseADirectory) {
  EXPECT_NE(ReadFile(dir_.string()).status().message().find("is a directory"), std::string::npos);
  EXPECT_NE(ReadRegularFile(dir_.string()).status().message().find("not a regular file"),
            std::string::npos);
}

// Read, /dev/zero would never end and take all memory.
TEST_F(FilesTest, BothRefuseADevice) {
  EXPECT_NE(ReadFile("/dev/zero").status().message().find("is a device"), std::string::npos);
  EXPECT_NE(ReadRegularFile("/dev/zero").status().message().find("not a regular file"),
            std::string::npos);
}

TEST_F(FilesTest, AUsersPipeIsReadToItsEnd) {
  const std::string fifo = Path("pipe");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << kBytes; });
  absl::StatusOr<std::string> bytes = ReadFile(fifo);
  writer.join();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, kBytes);
}

// No writer ever comes: opening the FIFO would wait forever (the test's
// timeout), so refusing it must not open it.
TEST_F(FilesTest, AFifoInPlaceOfAStoredFileIsRefusedWithoutWaiting) {
  const std::string fifo = Path("entry");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  absl::StatusOr<std::string> bytes = ReadRegularFile(fifo);
  EXPECT_EQ(bytes.status().code(), absl::StatusCode::kFailedPrecondition) << bytes.status();
}

TEST_F(FilesTest, ALinkIsFollowedToWhatItNames) {
  ASSERT_TRUE(WriteFile(Path("f"), kBytes).ok());
  fs::create_symlink(Path("f"), Path("link"));
  EXPECT_EQ(ReadRegularFile(Path("link")).value_or(""), kBytes);
  ASSERT_EQ(mkfifo(Path("fifo").c_str(), 0600), 0);
  fs::create_symlink(Path("fifo"), Path("link_to_fifo"));
  EXPECT_EQ(ReadRegularFile(Path("link_to_fifo")).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(FilesTest, WritingAtomicallyReplacesWhatWasThereAndLeavesNoTemporary) {
  const std::string fifo = Path("entry");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_TRUE(WriteFileAtomically(fifo, kBytes).ok());
  EXPECT_EQ(ReadRegularFile(fifo).value_or(""), kBytes);
  int files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir_)) ++files;
  EXPECT_EQ(files, 1);
}

TEST_F(FilesTest, WritingWhereADirectoryStandsFailsWithTheReasonAndNoTemporary) {
  fs::create_directories(dir_ / "entry" / "in_the_way");
  absl::Status written = WriteFileAtomically(Path("entry"), kBytes);
  EXPECT_FALSE(written.ok());
  EXPECT_NE(written.message().find("cannot publish"), std::string::npos) << written;
  int files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir_)) ++files;
  EXPECT_EQ(files, 1);
}

}  // namespace
}  // namespace seam
