//===- runtime/CacheIO.cpp - File primitives for the kernel cache ---------===//

#include "runtime/CacheIO.h"

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <random>

#include <fcntl.h>
#include <pthread.h>
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

/// What a non-regular file is, for messages.
const char *fileKind(mode_t Mode) {
  if (S_ISDIR(Mode))
    return "a directory";
  if (S_ISFIFO(Mode))
    return "a FIFO";
  if (S_ISSOCK(Mode))
    return "a socket";
  if (S_ISCHR(Mode) || S_ISBLK(Mode))
    return "a device";
  if (S_ISLNK(Mode))
    return "a symbolic link";
  return "of an unknown kind";
}

/// Reads exactly \p Size bytes unless the file ends first; returns the
/// count or -1 with errno set.
ssize_t readFully(int F, char *Dst, size_t Size) {
  size_t Done = 0;
  while (Done < Size) {
    ssize_t N = ::read(F, Dst + Done, Size - Done);
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return -1;
    if (N == 0)
      break; // Shrunk while reading: the parser sees the truncation.
    Done += static_cast<size_t>(N);
  }
  return static_cast<ssize_t>(Done);
}

/// Blocks SIGXFSZ in this thread while it lives and discards one raised
/// meanwhile, so a file size limit (`ulimit -f`) makes write() fail with
/// EFBIG instead of killing the process. A thread mask, not a process-wide
/// handler: other threads and the application's own handler are untouched.
class FileSizeSignalBlocker {
public:
  FileSizeSignalBlocker() {
    sigemptyset(&Set);
    sigaddset(&Set, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &Set, &Old);
    sigset_t Pending;
    WasPending = sigpending(&Pending) == 0 && sigismember(&Pending, SIGXFSZ);
  }
  ~FileSizeSignalBlocker() {
    sigset_t Pending;
    if (!WasPending && sigpending(&Pending) == 0 &&
        sigismember(&Pending, SIGXFSZ)) {
      struct timespec Zero {};
      (void)sigtimedwait(&Set, nullptr, &Zero);
    }
    pthread_sigmask(SIG_SETMASK, &Old, nullptr);
  }
  FileSizeSignalBlocker(const FileSizeSignalBlocker &) = delete;
  FileSizeSignalBlocker &operator=(const FileSizeSignalBlocker &) = delete;

private:
  sigset_t Set, Old;
  bool WasPending = false;
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

FileRead readRegularFile(const std::string &Path, const ReadOptions &Opts) {
  FileRead Out;
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer
  // forever. O_NOFOLLOW: a planted symlink chooses what we read.
  Fd F(::open(Path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (F.get() < 0) {
    Out.NotFound = errno == ENOENT;
    if (errno == ELOOP)
      Out.Error = fmt::format("'{}' is not a regular file (a symbolic link)",
                              Path);
    else
      Out.Error = errnoText("cannot open", Path);
    return Out;
  }
  struct stat St {};
  if (::fstat(F.get(), &St) != 0) {
    Out.Error = errnoText("cannot stat", Path);
    return Out;
  }
  if (!S_ISREG(St.st_mode)) {
    Out.Error = fmt::format("'{}' is not a regular file ({})", Path,
                            fileKind(St.st_mode));
    return Out;
  }
  if (Opts.RequireTrusted) {
    if (std::string Why = untrustedReason(St.st_uid, St.st_mode);
        !Why.empty()) {
      Out.Untrusted = true;
      Out.Error = std::move(Why);
      return Out;
    }
  }
  uint64_t Size = static_cast<uint64_t>(St.st_size);
  std::string Bytes;
  if (Opts.CheckHeader) {
    Bytes.resize(static_cast<size_t>(
        std::min<uint64_t>(Opts.HeaderBytes, Size)));
    ssize_t N = readFully(F.get(), Bytes.data(), Bytes.size());
    if (N < 0) {
      Out.Error = errnoText("cannot read", Path);
      return Out;
    }
    Bytes.resize(static_cast<size_t>(N));
    if (std::string Why = Opts.CheckHeader(Bytes, Size); !Why.empty()) {
      Out.Error = std::move(Why);
      return Out;
    }
  }
  if (Size > Opts.MaxBytes) {
    Out.Error = fmt::format("'{}' is {} bytes, over the {} byte limit", Path,
                            Size, Opts.MaxBytes);
    return Out;
  }
  size_t Have = Bytes.size();
  Bytes.resize(static_cast<size_t>(Size));
  ssize_t N = readFully(F.get(), Bytes.data() + Have, Bytes.size() - Have);
  if (N < 0) {
    Out.Error = errnoText("cannot read", Path);
    return Out;
  }
  Bytes.resize(Have + static_cast<size_t>(N));
  Out.Bytes = std::move(Bytes);
  return Out;
}

std::string writeFileAtomically(const std::string &Path,
                                llvm::StringRef Bytes) {
  std::string Tmp = fmt::format("{}.tmp.{}.{}", Path, ::getpid(), randomHex());
  FileSizeSignalBlocker NoSigXfsz;
  Fd F(::open(Tmp.c_str(),
              O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644));
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
  (void)::utimensat(AT_FDCWD, Path.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
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

std::string createPrivateDirs(const std::string &Dir) {
  std::filesystem::path Prefix;
  for (const std::filesystem::path &Part : std::filesystem::path(Dir)) {
    Prefix /= Part;
    if (Part.empty() || Part == "/")
      continue;
    if (::mkdir(Prefix.c_str(), 0700) == 0) {
      // mkdir's mode passes through the umask, which may take the owner's
      // bits away too (umask 0777); ours, so chmod cannot be refused.
      if (::chmod(Prefix.c_str(), 0700) != 0)
        return errnoText("cannot chmod", Prefix.string());
      continue;
    }
    if (errno != EEXIST)
      return errnoText("cannot create", Prefix.string());
  }
  return "";
}

std::string untrustedReason(uint32_t Uid, uint32_t Mode) {
  uid_t Me = ::geteuid();
  // Root is trusted as ssh trusts it: it can replace anything anyway.
  if (Uid != Me && Uid != 0)
    return fmt::format("owned by uid {}, not by this user (uid {})", Uid, Me);
  if (Mode & (S_IWGRP | S_IWOTH))
    return fmt::format("writable by group or others (mode {:04o})",
                       Mode & 07777);
  return "";
}

std::string checkTrusted(const std::string &Path) {
  struct stat St {};
  if (::stat(Path.c_str(), &St) != 0)
    return errnoText("cannot stat", Path);
  return untrustedReason(St.st_uid, St.st_mode);
}

} // namespace jitfuse::rt
