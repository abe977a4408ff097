#include "seam/eval/npy.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "seam/util/files.h"
#include "seam/util/status_macros.h"

namespace seam {
namespace {

constexpr absl::string_view kMagic("\x93NUMPY", 6);

struct NpyType {
  absl::string_view descr;
  DType dtype;
};
// Little-endian descrs; '|' marks single-byte types. bf16 is raw 2 bytes.
constexpr NpyType kNpyTypes[] = {
    {"|b1", DType::kPred}, {"|i1", DType::kS8},   {"<i2", DType::kS16},
    {"<i4", DType::kS32},  {"<i8", DType::kS64},  {"|u1", DType::kU8},
    {"<u2", DType::kU16},  {"<u4", DType::kU32},  {"<u8", DType::kU64},
    {"<f2", DType::kF16},  {"<f4", DType::kF32},  {"<f8", DType::kF64},
    {"<c8", DType::kC64},  {"<c16", DType::kC128}, {"|V2", DType::kBF16},
};

absl::StatusOr<DType> DTypeFromDescr(absl::string_view descr, absl::string_view what) {
  std::string normalized(descr);
  // NumPy writes '|' or '<' for byte-sized types and '=' on some platforms.
  if (!normalized.empty() && (normalized[0] == '=' || normalized[0] == '<' || normalized[0] == '|')) {
    for (const NpyType& t : kNpyTypes) {
      if (t.descr.substr(1) == absl::string_view(normalized).substr(1)) return t.dtype;
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": unsupported array type '", descr, "' (big-endian or unknown)"));
}

absl::string_view DescrOf(DType dtype) {
  for (const NpyType& t : kNpyTypes) {
    if (t.dtype == dtype) return t.descr;
  }
  return "";
}

// The value of `'key': value` in the header dict, up to the next top-level
// comma or closing brace.
absl::StatusOr<std::string> HeaderField(absl::string_view header, absl::string_view key,
                                        absl::string_view what) {
  std::string quoted = absl::StrCat("'", key, "':");
  size_t at = header.find(quoted);
  if (at == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": npy header has no '", key, "'"));
  }
  absl::string_view rest = absl::StripLeadingAsciiWhitespace(header.substr(at + quoted.size()));
  size_t end = 0;
  int depth = 0;
  for (; end < rest.size(); ++end) {
    char c = rest[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
  }
  return std::string(absl::StripTrailingAsciiWhitespace(rest.substr(0, end)));
}

absl::StatusOr<std::vector<int64_t>> ParseShapeTuple(absl::string_view text,
                                                     absl::string_view what) {
  if (!absl::ConsumePrefix(&text, "(") || !absl::ConsumeSuffix(&text, ")")) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": malformed npy shape"));
  }
  std::vector<int64_t> dims;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    int64_t d = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(part), &d) || d < 0) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": malformed npy shape"));
    }
    dims.push_back(d);
  }
  return dims;
}

// Whether [at, at + length) lies within `size` bytes, without the sum
// wrapping round (offsets come from the file).
bool Within(uint64_t at, uint64_t length, uint64_t size) {
  return at <= size && length <= size - at;
}

uint64_t ReadLE(absl::string_view bytes, size_t at, int width) {
  uint64_t v = 0;
  for (int i = width - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(bytes[at + i]);
  return v;
}

void AppendLE(std::string& out, uint64_t v, int width) {
  for (int i = 0; i < width; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

// zlib's CRC-32 over any number of bytes (it takes 32-bit lengths).
uint32_t Crc32(absl::string_view data) {
  uLong crc = crc32(0, nullptr, 0);
  for (size_t at = 0; at < data.size();) {
    const size_t chunk = std::min<size_t>(data.size() - at, size_t{1} << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data.data() + at), static_cast<uInt>(chunk));
    at += chunk;
  }
  return static_cast<uint32_t>(crc);
}

// Deflate expands at most 1032-fold: a member declaring more than that of
// its compressed bytes is corrupt, whatever it would inflate to.
constexpr uint64_t kMaxDeflateRatio = 1032;

// Inflates `data`, which declares `size` bytes. The output grows as the
// stream produces it, so memory follows what the data holds, not what the
// header claims.
absl::StatusOr<std::string> Inflate(absl::string_view data, uint64_t size, absl::string_view what) {
  auto corrupt = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": corrupt deflated member (", why, ")"));
  };
  if (size / kMaxDeflateRatio > data.size() + 1) {
    return corrupt(absl::StrCat("declares ", size, " bytes from ", data.size()));
  }
  z_stream stream{};
  if (inflateInit2(&stream, -MAX_WBITS) != Z_OK) {
    return absl::InternalError("zlib initialisation failed");
  }
  std::string out;
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  int rc = Z_OK;
  uint64_t fed = 0;
  while (rc == Z_OK) {
    if (stream.avail_in == 0 && fed < data.size()) {
      const uint64_t chunk = std::min<uint64_t>(data.size() - fed, uint64_t{1} << 30);
      stream.avail_in = static_cast<uInt>(chunk);
      fed += chunk;
    }
    if (out.size() == stream.total_out) {
      // Room for one byte past the declared size, which tells a stream that
      // holds more from one that ends there.
      if (out.size() > size) break;
      const uint64_t grown = std::max<uint64_t>(out.size() * 2, uint64_t{1} << 16);
      out.resize(static_cast<size_t>(std::min<uint64_t>(size + 1, grown)));
    }
    stream.next_out = reinterpret_cast<Bytef*>(out.data() + stream.total_out);
    stream.avail_out =
        static_cast<uInt>(std::min<uint64_t>(out.size() - stream.total_out, uint64_t{1} << 30));
    rc = inflate(&stream, Z_NO_FLUSH);
    if (rc == Z_BUF_ERROR && stream.avail_in == 0 && fed == data.size()) break;
    if (rc == Z_BUF_ERROR) rc = Z_OK;
  }
  const uint64_t produced = stream.total_out;
  inflateEnd(&stream);
  if (rc != Z_STREAM_END) return corrupt("the stream does not end where the member does");
  if (produced != size) return corrupt(absl::StrCat("declares ", size, " bytes, holds ", produced));
  out.resize(static_cast<size_t>(produced));
  return out;
}

}  // namespace

absl::StatusOr<Literal> ParseNpy(absl::string_view bytes, absl::string_view what) {
  if (bytes.size() < 10 || bytes.substr(0, 6) != kMagic) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": not an .npy file"));
  }
  int major = static_cast<uint8_t>(bytes[6]);
  size_t header_len_width = major == 1 ? 2 : 4;
  size_t header_start = 8 + header_len_width;
  if (bytes.size() < header_start) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": truncated .npy header"));
  }
  size_t header_len = ReadLE(bytes, 8, static_cast<int>(header_len_width));
  if (!Within(header_start, header_len, bytes.size())) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": truncated .npy header"));
  }
  absl::string_view header = bytes.substr(header_start, header_len);
  SEAM_ASSIGN_OR_RETURN(std::string descr, HeaderField(header, "descr", what));
  SEAM_ASSIGN_OR_RETURN(std::string fortran, HeaderField(header, "fortran_order", what));
  SEAM_ASSIGN_OR_RETURN(std::string shape_text, HeaderField(header, "shape", what));
  if (fortran != "False") {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": Fortran-ordered arrays are not supported; save a C-ordered copy"));
  }
  SEAM_ASSIGN_OR_RETURN(DType dtype,
                        DTypeFromDescr(absl::StripSuffix(absl::StripPrefix(descr, "'"), "'"), what));
  SEAM_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ParseShapeTuple(shape_text, what));
  // The declared size is checked against the data before anything is
  // allocated for it.
  uint64_t expected = static_cast<uint64_t>(DTypeByteSize(dtype));
  for (int64_t d : dims) {
    if (__builtin_mul_overflow(expected, static_cast<uint64_t>(d), &expected)) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": declares shape (", absl::StrJoin(dims, ", "), "), more bytes than 2^64"));
    }
  }
  absl::string_view data = bytes.substr(header_start + header_len);
  if (data.size() != expected) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": holds ", data.size(), " data bytes, its header declares ", expected));
  }
  Literal array(Shape::Array(dtype, dims));
  // An empty array has no buffer to copy into (memcpy's pointers must not be null).
  if (!data.empty()) std::memcpy(array.mutable_bytes().data(), data.data(), data.size());
  return array;
}

std::string SerializeNpy(const Literal& array) {
  const Shape& shape = array.shape();
  std::string dims = absl::StrJoin(shape.dims(), ", ");
  if (shape.rank() == 1) dims += ",";
  std::string header = absl::StrCat("{'descr': '", DescrOf(shape.dtype()),
                                    "', 'fortran_order': False, 'shape': (", dims, "), }");
  // Pad so the data starts on a 64-byte boundary, ending with a newline.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic);
  out += '\x01';
  out += '\x00';
  AppendLE(out, header.size(), 2);
  out += header;
  out.append(reinterpret_cast<const char*>(array.bytes().data()), array.bytes().size());
  return out;
}

absl::StatusOr<Literal> ReadNpyFile(const std::string& path) {
  SEAM_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  return ParseNpy(bytes, path);
}

absl::Status WriteNpyFile(const std::string& path, const Literal& array) {
  return WriteFile(path, SerializeNpy(array));
}

absl::StatusOr<NamedArrays> ReadNpzFile(const std::string& path) {
  SEAM_ASSIGN_OR_RETURN(std::string file, ReadFile(path));
  return ParseNpz(file, path);
}

absl::StatusOr<NamedArrays> ParseNpz(absl::string_view bytes, absl::string_view what,
                                     NpzChecks checks) {
  auto corrupt = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": not a valid .npz archive (", why, ")"));
  };
  // The end-of-central-directory record is in the last 64 KiB + 22 bytes.
  size_t eocd = absl::string_view::npos;
  for (size_t i = bytes.size() >= 22 ? bytes.size() - 22 : 0;
       bytes.size() >= 22 && i + 65557 >= bytes.size(); --i) {
    if (ReadLE(bytes, i, 4) == 0x06054b50) {
      eocd = i;
      break;
    }
    if (i == 0) break;
  }
  if (eocd == absl::string_view::npos) return corrupt("no end of central directory");
  uint64_t count = ReadLE(bytes, eocd + 10, 2);
  uint64_t at = ReadLE(bytes, eocd + 16, 4);
  NamedArrays arrays;
  for (uint64_t n = 0; n < count; ++n) {
    if (!Within(at, 46, bytes.size()) || ReadLE(bytes, at, 4) != 0x02014b50) {
      return corrupt("bad central directory entry");
    }
    int method = static_cast<int>(ReadLE(bytes, at + 10, 2));
    const uint32_t crc = static_cast<uint32_t>(ReadLE(bytes, at + 16, 4));
    uint64_t compressed = ReadLE(bytes, at + 20, 4);
    uint64_t size = ReadLE(bytes, at + 24, 4);
    size_t name_len = ReadLE(bytes, at + 28, 2);
    size_t extra_len = ReadLE(bytes, at + 30, 2);
    size_t comment_len = ReadLE(bytes, at + 32, 2);
    uint64_t local = ReadLE(bytes, at + 42, 4);
    if (!Within(at + 46, name_len + extra_len, bytes.size())) return corrupt("truncated entry");
    std::string name(bytes.substr(at + 46, name_len));
    // Zip64: the saturated fields follow in the extra block, in this order.
    const size_t extra_end = at + 46 + name_len + extra_len;
    for (size_t e = at + 46 + name_len; e + 4 <= extra_end;) {
      size_t id = ReadLE(bytes, e, 2), len = ReadLE(bytes, e + 2, 2);
      if (!Within(e + 4, len, extra_end)) return corrupt("truncated extra field");
      if (id == 0x0001) {
        size_t f = e + 4;
        auto next = [&](uint64_t& field) {
          if (field != 0xffffffff) return true;
          if (!Within(f, 8, e + 4 + len)) return false;
          field = ReadLE(bytes, f, 8);
          f += 8;
          return true;
        };
        if (!next(size) || !next(compressed) || !next(local))
          return corrupt("truncated zip64 field");
      }
      e += 4 + len;
    }
    at = extra_end + comment_len;
    if (!Within(local, 30, bytes.size()) || ReadLE(bytes, local, 4) != 0x04034b50) {
      return corrupt("bad local header");
    }
    const uint64_t local_extra = ReadLE(bytes, local + 26, 2) + ReadLE(bytes, local + 28, 2);
    if (!Within(local + 30, local_extra, bytes.size())) return corrupt("truncated local header");
    const uint64_t data_at = local + 30 + local_extra;
    if (!Within(data_at, compressed, bytes.size())) return corrupt("truncated member");
    absl::string_view data = bytes.substr(data_at, compressed);
    std::string member = absl::StrCat(what, ":", name);
    std::string inflated;
    if (method == 8) {
      SEAM_ASSIGN_OR_RETURN(inflated, Inflate(data, size, member));
      data = inflated;
    } else if (method != 0) {
      return corrupt(absl::StrCat("compression method ", method));
    }
    // NumPy refuses a member whose CRC-32 does not match: so does Seam.
    if (checks == NpzChecks::kCrc32 && Crc32(data) != crc) {
      return corrupt(absl::StrCat("member '", name, "' fails its CRC-32 check"));
    }
    SEAM_ASSIGN_OR_RETURN(Literal array, ParseNpy(data, member));
    arrays.push_back({std::string(absl::StripSuffix(name, ".npy")), std::move(array)});
  }
  return arrays;
}

absl::Status WriteNpzFile(const std::string& path,
                          const std::vector<std::pair<std::string, const Literal*>>& arrays) {
  std::string out;
  std::string directory;
  for (const auto& [name, array] : arrays) {
    std::string member = SerializeNpy(*array);
    std::string file_name = name + ".npy";
    uint32_t crc = Crc32(member);
    uint64_t offset = out.size();
    auto common = [&](std::string& s) {
      AppendLE(s, 20, 2);  // version needed
      AppendLE(s, 0, 2);   // flags
      AppendLE(s, 0, 2);   // stored
      AppendLE(s, 0, 2);   // time
      AppendLE(s, 0x21, 2);  // date: 1980-01-01
      AppendLE(s, crc, 4);
      AppendLE(s, member.size(), 4);
      AppendLE(s, member.size(), 4);
      AppendLE(s, file_name.size(), 2);
      AppendLE(s, 0, 2);  // extra length
    };
    AppendLE(out, 0x04034b50, 4);
    common(out);
    out += file_name;
    out += member;
    AppendLE(directory, 0x02014b50, 4);
    AppendLE(directory, 20, 2);  // version made by
    common(directory);
    AppendLE(directory, 0, 2);  // comment length
    AppendLE(directory, 0, 2);  // disk
    AppendLE(directory, 0, 2);  // internal attributes
    AppendLE(directory, 0, 4);  // external attributes
    AppendLE(directory, offset, 4);
    directory += file_name;
  }
  uint64_t directory_at = out.size();
  out += directory;
  AppendLE(out, 0x06054b50, 4);
  AppendLE(out, 0, 4);  // disk numbers
  AppendLE(out, arrays.size(), 2);
  AppendLE(out, arrays.size(), 2);
  AppendLE(out, directory.size(), 4);
  AppendLE(out, directory_at, 4);
  AppendLE(out, 0, 2);  // comment length
  return WriteFile(path, out);
}

absl::StatusOr<Literal> ConvertForParameter(Literal array, const Shape& expected,
                                            absl::string_view what) {
  if (!expected.IsArray()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": parameter of shape ", expected.ToString(false),
                     " cannot be read from an array file"));
  }
  DType got = array.shape().dtype();
  if (expected.dtype() == DType::kBF16 && (got == DType::kU16 || got == DType::kBF16)) {
    Literal converted(Shape::Array(DType::kBF16, array.shape().dims()));
    converted.mutable_bytes() = std::move(array.mutable_bytes());
    array = std::move(converted);
  }
  if (array.shape().dtype() != expected.dtype() || array.shape().dims() != expected.dims()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": expected ", expected.ToString(false),
                                                   ", got ", array.shape().ToString(false)));
  }
  return array;
}

}  // namespace seam
