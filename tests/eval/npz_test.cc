// The .npz reader trusts nothing in the file: offsets near 2^64, declared
// sizes it has not seen the bytes for, a member whose CRC-32 does not
// match, and arrays that name no parameter all give a clear error, and
// nothing is allocated on a size the file merely claims.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "eval_test_util.h"
#include "seam/eval/arguments.h"
#include "seam/eval/npy.h"

namespace seam::evaltest {
namespace {

namespace fs = std::filesystem;

std::string TempPath(const std::string& name) {
  return (fs::path(::testing::TempDir()) / absl::StrCat("seam_npz_", getpid(), "_", name)).string();
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

void PutLE(std::string& bytes, size_t at, uint64_t value, int width) {
  for (int i = 0; i < width; ++i) bytes[at + i] = static_cast<char>((value >> (8 * i)) & 0xff);
}

// An archive of one stored member `x` (f32[4]), as numpy.savez writes it.
std::string OneMemberArchive() {
  const std::string path = TempPath("one.npz");
  Literal x = F32({1, 2, 3, 4});
  EXPECT_TRUE(WriteNpzFile(path, {{"x", &x}}).ok());
  std::string bytes = ReadBytes(path);
  fs::remove(path);
  return bytes;
}

// The central directory entry's offset (the archive has one).
size_t CentralEntry(const std::string& bytes) {
  return bytes.rfind("PK\x01\x02", std::string::npos);
}

std::string ErrorReading(const std::string& bytes, const std::string& name) {
  const std::string path = TempPath(name);
  WriteBytes(path, bytes);
  absl::StatusOr<NamedArrays> arrays = ReadNpzFile(path);
  fs::remove(path);
  EXPECT_FALSE(arrays.ok()) << name;
  return arrays.ok() ? "" : std::string(arrays.status().message());
}

TEST(Npz, AValidArchiveReadsBack) {
  const std::string path = TempPath("valid.npz");
  WriteBytes(path, OneMemberArchive());
  absl::StatusOr<NamedArrays> arrays = ReadNpzFile(path);
  fs::remove(path);
  ASSERT_TRUE(arrays.ok()) << arrays.status();
  ASSERT_EQ(arrays->size(), 1u);
  EXPECT_EQ((*arrays)[0].first, "x");
  EXPECT_TRUE(SameFloats((*arrays)[0].second, {1, 2, 3, 4}));
}

// NumPy refuses a member whose bytes changed: so does Seam.
TEST(Npz, AFlippedByteFailsTheCrc) {
  std::string bytes = OneMemberArchive();
  bytes[bytes.find("NUMPY") + 130] ^= 1;  // in the data
  EXPECT_NE(ErrorReading(bytes, "flip.npz").find("fails its CRC-32 check"), std::string::npos);
}

// A zip64 local-header offset near 2^64 would wrap a bounds check.
TEST(Npz, AZip64OffsetNear2To64IsOutOfBounds) {
  std::string bytes = OneMemberArchive();
  const size_t entry = CentralEntry(bytes);
  ASSERT_NE(entry, std::string::npos);
  const size_t name_len = 5;  // "x.npy"
  std::string extra(12, '\0');
  PutLE(extra, 0, 0x0001, 2);
  PutLE(extra, 2, 8, 2);
  PutLE(extra, 4, 0xfffffffffffffff0ull, 8);
  bytes.insert(entry + 46 + name_len, extra);
  PutLE(bytes, entry + 30, extra.size(), 2);  // extra length
  PutLE(bytes, entry + 42, 0xffffffff, 4);    // local offset: in the zip64 field
  EXPECT_NE(ErrorReading(bytes, "zip64.npz").find("bad local header"), std::string::npos);
}

// A deflated member claiming 4 GB from a few hundred bytes is refused
// before anything is allocated for it.
TEST(Npz, ADeflatedMemberDeclaringMoreThanDeflateCanHoldIsCorrupt) {
  std::string bytes = OneMemberArchive();
  const size_t entry = CentralEntry(bytes);
  PutLE(bytes, entry + 10, 8, 2);           // deflated
  PutLE(bytes, entry + 24, 0xfffffff0, 4);  // uncompressed size
  const std::string error = ErrorReading(bytes, "bomb.npz");
  EXPECT_NE(error.find("declares 4294967280 bytes from"), std::string::npos) << error;
}

// Shapes the data cannot hold are refused before they are allocated.
TEST(Npz, DeclaredShapesAreCheckedAgainstTheData) {
  Literal x = F32({1, 2, 3, 4});
  std::string npy = SerializeNpy(x);
  std::string huge = npy;
  const size_t shape = huge.find("(4,)");
  ASSERT_NE(shape, std::string::npos);
  huge.replace(shape, 4, "(100000, 100000, 100)");
  absl::StatusOr<Literal> parsed = ParseNpy(huge, "huge.npy");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(std::string(parsed.status().message()).find("its header declares 4000000000000"),
            std::string::npos)
      << parsed.status();
  std::string wrapping = npy;
  wrapping.replace(shape, 4, "(4294967296, 4294967296)");
  parsed = ParseNpy(wrapping, "wrap.npy");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(std::string(parsed.status().message()).find("more bytes than 2^64"), std::string::npos)
      << parsed.status();
}

// Arrays bind to parameters by name, or in order when NumPy named them by
// position (np.savez(a, b)); an array named after no parameter is refused,
// not bound by its place.
TEST(Npz, ArraysBindByNameOrByNumPysPositionalNames) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  b = f32[2] parameter(1)
  ROOT t = (f32[4], f32[2]) tuple(x, b)
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  const Computation& entry = *(*module)->entry();
  Literal x = F32({1, 2, 3, 4});
  Literal b = F32({5, 6});
  const std::string path = TempPath("bind.npz");

  ASSERT_TRUE(WriteNpzFile(path, {{"b", &b}, {"x", &x}}).ok());  // by name, in another order
  absl::StatusOr<std::vector<Literal>> bound = LoadArguments(entry, path);
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_TRUE(SameFloats((*bound)[0], {1, 2, 3, 4}));
  EXPECT_TRUE(SameFloats((*bound)[1], {5, 6}));

  ASSERT_TRUE(WriteNpzFile(path, {{"arr_0", &x}, {"arr_1", &b}}).ok());
  bound = LoadArguments(entry, path);
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_TRUE(SameFloats((*bound)[1], {5, 6}));

  ASSERT_TRUE(WriteNpzFile(path, {{"y", &x}, {"b", &b}}).ok());
  bound = LoadArguments(entry, path);
  fs::remove(path);
  ASSERT_FALSE(bound.ok());
  EXPECT_NE(
      std::string(bound.status().message()).find("holds arrays named y, b for parameters x, b"),
      std::string::npos)
      << bound.status();
}

}  // namespace
}  // namespace seam::evaltest
