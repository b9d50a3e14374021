//===- runtime/CacheIO.cpp - File primitives for the kernel cache ---------===//

#include "runtime/CacheIO.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <random>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace jitfuse::rt {

namespace {

std::string errnoText(const char *What, const std::string &Path) {
  return fmt::format("{} '{}': {}", What, Path, std::strerror(errno));
}

/// Closes a descriptor on every exit path.
class Fd {
public:
  explicit Fd(int F) : F(F) {}
  ~Fd() {
    if (F >= 0)
      ::close(F);
  }
  Fd(const Fd &) = delete;
  Fd &operator=(const Fd &) = delete;
  int get() const { return F; }
  /// Closes now and reports the result (close can surface write errors).
  int close() {
    int R = ::close(F);
    F = -1;
    return R;
  }

private:
  int F;
};

} // namespace

std::string randomHex() {
  // Seeded per thread from the OS, so concurrent writers in one process (and
  // processes sharing a pid namespace) pick different temp names.
  thread_local std::mt19937_64 Gen{
      (static_cast<uint64_t>(std::random_device{}()) << 32) ^
      std::random_device{}()};
  return fmt::format("{:016x}", Gen());
}

FileRead readWholeFile(const std::string &Path, uint64_t MaxBytes) {
  FileRead Out;
  Fd F(::open(Path.c_str(), O_RDONLY | O_CLOEXEC));
  if (F.get() < 0) {
    Out.NotFound = errno == ENOENT;
    Out.Error = errnoText("cannot open", Path);
    return Out;
  }
  struct stat St {};
  if (::fstat(F.get(), &St) != 0) {
    Out.Error = errnoText("cannot stat", Path);
    return Out;
  }
  if (!S_ISREG(St.st_mode)) {
    Out.Error = fmt::format("'{}' is not a regular file", Path);
    return Out;
  }
  if (static_cast<uint64_t>(St.st_size) > MaxBytes) {
    Out.Error = fmt::format("'{}' is {} bytes, over the {} byte limit", Path,
                            static_cast<long long>(St.st_size), MaxBytes);
    return Out;
  }
  std::string Bytes(static_cast<size_t>(St.st_size), '\0');
  size_t Done = 0;
  while (Done < Bytes.size()) {
    ssize_t N = ::read(F.get(), Bytes.data() + Done, Bytes.size() - Done);
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0) {
      Out.Error = errnoText("cannot read", Path);
      return Out;
    }
    if (N == 0)
      break; // Shrunk while reading: the parser sees the truncation.
    Done += static_cast<size_t>(N);
  }
  Bytes.resize(Done);
  Out.Bytes = std::move(Bytes);
  return Out;
}

std::string writeFileAtomically(const std::string &Path,
                                llvm::StringRef Bytes) {
  std::string Tmp = fmt::format("{}.tmp.{}.{}", Path, ::getpid(), randomHex());
  Fd F(::open(Tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (F.get() < 0)
    return errnoText("cannot create", Tmp);

  size_t Done = 0;
  while (Done < Bytes.size()) {
    ssize_t N = ::write(F.get(), Bytes.data() + Done, Bytes.size() - Done);
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0) {
      std::string Err = errnoText("cannot write", Tmp);
      ::unlink(Tmp.c_str());
      return Err;
    }
    Done += static_cast<size_t>(N);
  }
  // No fsync: after a power loss the entry may be truncated or empty, which
  // the checksum turns into a miss; paying a disk flush per compile is not
  // worth protecting a cache.
  if (F.close() != 0) {
    std::string Err = errnoText("cannot close", Tmp);
    ::unlink(Tmp.c_str());
    return Err;
  }
  if (::rename(Tmp.c_str(), Path.c_str()) != 0) {
    std::string Err = errnoText("cannot rename into", Path);
    ::unlink(Tmp.c_str());
    return Err;
  }
  return "";
}

void touchFile(const std::string &Path) {
  (void)::utimensat(AT_FDCWD, Path.c_str(), nullptr, 0);
}

std::string probeWritable(const std::string &Dir) {
  // Named like a temp file so a crash between create and unlink leaves
  // something the stale-temp sweep removes.
  std::string Probe =
      fmt::format("{}/.probe.tmp.{}.{}", Dir, ::getpid(), randomHex());
  Fd F(::open(Probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (F.get() < 0)
    return std::strerror(errno);
  F.close();
  ::unlink(Probe.c_str());
  return "";
}

} // namespace jitfuse::rt
