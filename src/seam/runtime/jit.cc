#include "seam/runtime/jit.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "seam/util/files.h"
#include "seam/util/status_macros.h"

extern char** environ;

namespace seam::runtime {
namespace {

namespace fs = std::filesystem;

// How long the system compiler may take on one source file before it is
// stopped (a compiler that hangs would hang Seam): SEAM_COMPILER_TIMEOUT
// seconds, else 15 minutes (a large module's kernels build in about one).
double CompilerTimeoutSeconds() {
  if (const char* env = std::getenv("SEAM_COMPILER_TIMEOUT"); env != nullptr && *env != '\0') {
    const double seconds = std::atof(env);
    if (seconds > 0) return seconds;
  }
  return 900;
}

// Runs argv, returning its exit status and everything it printed; stopped
// after CompilerTimeoutSeconds().
absl::StatusOr<std::pair<int, std::string>> RunCommand(const std::vector<std::string>& argv) {
  char log_template[] = "/tmp/seam_cc_XXXXXX";
  int log_fd = mkstemp(log_template);
  if (log_fd < 0) return absl::InternalError("cannot create a temporary file for compiler output");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, log_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, log_fd, 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  int spawn = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(log_fd);
  std::ifstream log(log_template);
  std::stringstream output;
  if (spawn != 0) {
    unlink(log_template);
    return absl::FailedPreconditionError(
        absl::StrCat("cannot run the C++ compiler '", argv[0], "': ", std::strerror(spawn)));
  }
  int status = 0;
  const auto start = std::chrono::steady_clock::now();
  const double limit = CompilerTimeoutSeconds();
  auto pause = std::chrono::microseconds(200);
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > limit) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      unlink(log_template);
      return absl::DeadlineExceededError(absl::StrFormat(
          "the C++ compiler '%s' ran past %.0f s and was stopped (SEAM_COMPILER_TIMEOUT sets "
          "the limit)",
          argv[0], limit));
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(20000));
  }
  output << log.rdbuf();
  unlink(log_template);
  return std::make_pair(WIFEXITED(status) ? WEXITSTATUS(status) : -1, output.str());
}

const std::string& CompilerVersion(const std::string& compiler) {
  static std::mutex mu;
  static auto* versions = new std::map<std::string, std::string>();
  std::lock_guard<std::mutex> lock(mu);
  auto it = versions->find(compiler);
  if (it != versions->end()) return it->second;
  absl::StatusOr<std::pair<int, std::string>> run = RunCommand({compiler, "--version"});
  std::string version = run.ok() ? run->second.substr(0, run->second.find('\n')) : "unknown";
  return (*versions)[compiler] = version;
}

// An entry's checksum file: the StableHash of the object's bytes, checked
// before the object is loaded (dlopen trusts what it maps: a truncated
// object faults on every later run, a changed one runs whatever it holds).
std::string SumPath(const std::string& object) { return object + ".sum"; }

// Whether the entry at `path` (object and checksum) is whole: anything
// else there (a truncated or changed object, a missing checksum, a FIFO) is
// not loaded.
bool EntryIsWhole(const std::string& path) {
  absl::StatusOr<std::string> object = ReadRegularFile(path);
  absl::StatusOr<std::string> sum = ReadRegularFile(SumPath(path));
  return object.ok() && sum.ok() && StableHash(*object) == *sum;
}

// Removes an entry that is not whole, never throwing; an entry that cannot
// be removed is an error (it would be found again on every run).
absl::Status RemoveEntry(const std::string& path) {
  for (const std::string& file : {path, SumPath(path)}) {
    std::error_code error;
    fs::remove(file, error);
    if (error && error != std::errc::no_such_file_or_directory) {
      return absl::PermissionDeniedError(absl::StrCat(
          "the kernel cache entry ", file, " is damaged and cannot be removed: ", error.message(),
          " (remove it, or set SEAM_CACHE_DIR to another directory)"));
    }
  }
  return absl::OkStatus();
}

// Temporaries an hour old are left by builds that were killed (a build in
// progress writes its temporaries within minutes).
void RemoveStaleTemporaries(const std::string& dir) {
  std::error_code error;
  const auto now = fs::file_time_type::clock::now();
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.find(".tmp.") == std::string::npos) continue;
    std::error_code ignored;
    const auto written = fs::last_write_time(it->path(), ignored);
    if (!ignored && now - written > std::chrono::hours(1)) fs::remove(it->path(), ignored);
  }
}

// Loads `path` and checks it is the entry for `key`.
absl::StatusOr<std::shared_ptr<SharedObject>> Load(const std::string& path, const std::string& key) {
  // RTLD_NODELETE: the pool's threads outlive a kernel's last call, and
  // the destructors of their scratch arenas live in the object.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) return absl::DataLossError(absl::StrCat("cannot load ", path, ": ", dlerror()));
  auto object = std::make_shared<SharedObject>(handle);
  absl::StatusOr<void*> stamp = object->Symbol("seam_cache_key");
  if (!stamp.ok() || std::string(static_cast<const char*>(*stamp)) != key) {
    return absl::DataLossError(absl::StrCat(path, " is not the cache entry it is named after"));
  }
  return object;
}

}  // namespace

namespace {

constexpr uint64_t kOdd1 = 0x9e3779b185ebca87ull, kOdd2 = 0xc2b2ae3d27d4eb4full;

uint64_t Rotate(uint64_t x, int bits) { return (x << bits) | (x >> (64 - bits)); }

// Spreads every input bit over the whole word (multiply-xorshift).
uint64_t Avalanche(uint64_t x) {
  x ^= x >> 33;
  x *= kOdd2;
  x ^= x >> 29;
  x *= kOdd1;
  return x ^ (x >> 32);
}

}  // namespace

// Cache keys must not change between processes: no std::hash. Four
// independent lanes take 32 bytes a step, so hashing a large module's text
// costs a fraction of a millisecond, not milliseconds as bytewise hashing does.
std::string StableHash(absl::string_view text) {
  uint64_t lanes[4] = {kOdd1 + kOdd2, kOdd2, 0, 0 - kOdd1};
  const char* p = text.data();
  const size_t n = text.size();
  size_t at = 0;
  for (; at + 32 <= n; at += 32) {
    for (int k = 0; k < 4; ++k) {
      uint64_t word;
      std::memcpy(&word, p + at + 8 * k, 8);
      lanes[k] = Rotate(lanes[k] + word * kOdd2, 31) * kOdd1;
    }
  }
  for (int k = 0; at < n; ++at, k = (k + 1) % 4) {
    lanes[k] = Rotate(lanes[k] ^ (static_cast<unsigned char>(p[at]) * kOdd1), 23) * kOdd2;
  }
  const uint64_t low = Avalanche(lanes[0] ^ Rotate(lanes[1], 7) ^ Rotate(lanes[2], 12) ^
                                 Rotate(lanes[3], 18) ^ n);
  const uint64_t high = Avalanche(lanes[3] ^ Rotate(lanes[2], 9) ^ Rotate(lanes[1], 21) ^
                                  Rotate(lanes[0], 41) ^ (n * kOdd1));
  return absl::StrFormat("%016x%016x", high, low);
}

SharedObject::~SharedObject() {
  if (handle_ != nullptr) dlclose(handle_);
}

absl::StatusOr<void*> SharedObject::Symbol(const std::string& name) const {
  dlerror();
  void* address = dlsym(handle_, name.c_str());
  if (address == nullptr) {
    return absl::NotFoundError(absl::StrCat("the compiled kernels have no symbol '", name, "'"));
  }
  return address;
}

absl::StatusOr<std::string> CacheDirectory() {
  std::string dir;
  if (const char* env = std::getenv("SEAM_CACHE_DIR"); env != nullptr && *env != '\0') {
    dir = env;
  } else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    dir = absl::StrCat(xdg, "/seam");
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    dir = absl::StrCat(home, "/.cache/seam");
  } else {
    dir = "/tmp/seam-cache";
  }
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create the kernel cache directory ", dir, ": ", error.message(),
                     " (set SEAM_CACHE_DIR to a writable directory)"));
  }
  return dir;
}

absl::StatusOr<CompileResult> CompileAndLoad(const std::string& source,
                                             const CompilerOptions& options) {
  auto start = std::chrono::steady_clock::now();
  std::string key = StableHash(absl::StrCat(source, "\n", CompilerVersion(options.compiler), "\n",
                                            absl::StrJoin(options.flags, " ")));
  absl::StatusOr<std::string> dir = CacheDirectory();
  if (!dir.ok()) return dir.status();
  std::string path = absl::StrCat(*dir, "/", key, ".so");
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  std::error_code error;
  if (fs::exists(fs::symlink_status(path, error)) ||
      fs::exists(fs::symlink_status(SumPath(path), error))) {
    if (EntryIsWhole(path)) {
      absl::StatusOr<std::shared_ptr<SharedObject>> cached = Load(path, key);
      if (cached.ok()) return CompileResult{*cached, true, seconds(), path};
    }
    SEAM_RETURN_IF_ERROR(RemoveEntry(path));  // damaged or foreign: rebuilt below
  }
  RemoveStaleTemporaries(*dir);
  // A unique temporary name per process and call; rename publishes it.
  std::string stem = absl::StrFormat("%s/%s.tmp.%d.%x", *dir, key, getpid(),
                                     std::random_device{}());
  std::string cc_path = stem + ".cc", so_path = stem + ".so";
  {
    std::ofstream out(cc_path);
    out << source << "\nextern \"C\" __attribute__((visibility(\"default\"))) const char "
        << "seam_cache_key[] = \"" << key << "\";\n";
    if (!out) return absl::PermissionDeniedError(absl::StrCat("cannot write ", cc_path));
  }
  std::vector<std::string> argv{options.compiler};
  argv.insert(argv.end(), options.flags.begin(), options.flags.end());
  argv.insert(argv.end(), {"-o", so_path, cc_path});
  absl::StatusOr<std::pair<int, std::string>> run = RunCommand(argv);
  std::error_code ignored;
  if (!run.ok() || run->first != 0) fs::remove(so_path, ignored);
  if (!run.ok()) {
    fs::remove(cc_path, ignored);
    return run.status();
  }
  if (run->first != 0) {
    std::string log = run->second.substr(0, 4000);
    return absl::InternalError(absl::StrCat("the C++ compiler failed on generated kernels (",
                                            cc_path, " kept for inspection for an hour):\n", log));
  }
  fs::remove(cc_path, ignored);
  // The checksum first, then the object: a reader finding the object finds
  // its checksum (or, racing another build of the same entry, one that does
  // not match, and rebuilds).
  absl::StatusOr<std::string> built = ReadRegularFile(so_path);
  if (!built.ok()) return built.status();
  SEAM_RETURN_IF_ERROR(WriteFileAtomically(SumPath(path), StableHash(*built)));
  fs::rename(so_path, path, error);
  if (error) {
    fs::remove(so_path, ignored);
    return absl::InternalError(absl::StrCat("cannot publish ", path, ": ", error.message()));
  }
  absl::StatusOr<std::shared_ptr<SharedObject>> loaded = Load(path, key);
  if (!loaded.ok()) return loaded.status();
  return CompileResult{*loaded, false, seconds(), path};
}

}  // namespace seam::runtime
