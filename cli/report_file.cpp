#include "report_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "native_ops/error.h"
#include "native_ops/names.h"

namespace native_ops::cli {

namespace {

namespace fs = std::filesystem;

// How each report begins, as lib/src/testing/{bench,sweep}_report.cpp and tune.cpp write it.
struct KindInfo {
  const char* name;
  const char* head;
};

KindInfo info(ReportKind kind) {
  switch (kind) {
    case ReportKind::junit:
      return {"JUnit XML report of native-ops test",
              "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"native-ops test\""};
    case ReportKind::bench_json: return {"JSON report of native-ops bench", "{\n  \"devices\": ["};
    case ReportKind::bench_csv: return {"CSV report of native-ops bench", "node,dsl,op,device,shape,"};
    case ReportKind::bench_svg: return {"SVG chart of native-ops bench", "<svg xmlns=\"http://www.w3.org/2000/svg\""};
    case ReportKind::tuned_policy:
      return {"policy written by native-ops tune", "{\n \"version\": 2,\n \"description\": \"Tuned"};
  }
  return {"report", ""};
}

std::string where(const ReportFile& file) { return file.option + " " + excerpt(file.path); }

std::string errno_text(int error) { return std::strerror(error); }

fs::path directory_of(const fs::path& path) { return path.has_parent_path() ? path.parent_path() : fs::path("."); }

// A new file in `directory` that no one else can have opened: created with O_EXCL, under
// the umask like any file the user creates.
std::pair<int, fs::path> create_temporary(const fs::path& directory, const std::string& name) {
  static unsigned serial = 0;
  for (int attempt = 0; attempt < 100; ++attempt) {
    const fs::path candidate =
        directory / ("." + name + ".tmp." + std::to_string(getpid()) + "." + std::to_string(serial++));
    const int fd = open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return {fd, candidate};
  }
  errno = EEXIST;
  return {-1, fs::path()};
}

void check_existing(const ReportFile& file, const struct stat& target, bool force) {
  const KindInfo kind = info(file.kind);
  if (S_ISDIR(target.st_mode)) throw Error(where(file) + ": is a directory: give a file's path");
  if (!S_ISREG(target.st_mode) && !S_ISLNK(target.st_mode)) {
    throw Error(where(file) + ": is not a regular file (a FIFO, device or socket): give a file's path");
  }
  if (force) return;
  if (S_ISLNK(target.st_mode)) {
    throw Error(where(file) +
                ": is a symbolic link: a report replaces the path, not what the link points at; "
                "give the target's own path, or --force to replace the link");
  }
  if (target.st_size == 0) return;
  std::ifstream existing(file.path, std::ios::binary);
  std::string head(std::strlen(kind.head), '\0');
  existing.read(head.data(), static_cast<std::streamsize>(head.size()));
  if (existing.bad() || (!existing && !existing.eof())) {
    throw Error(where(file) + ": exists and cannot be read to check what it holds (" + errno_text(errno) +
                "): give another path, or --force to replace it");
  }
  head.resize(static_cast<size_t>(existing.gcount()));
  if (head != kind.head) {
    throw Error(where(file) + ": exists and is not a " + kind.name +
                ", so it is left as it is: give another path, or --force to replace it");
  }
}

// Removes the unfinished new file; the report's path keeps what it had.
[[noreturn]] void abandon(const ReportFile& file, const fs::path& temporary, int fd, const std::string& what) {
  const int error = errno;
  if (fd >= 0) close(fd);
  unlink(temporary.c_str());
  throw Error(where(file) + ": " + what + ": " + errno_text(error) + "; what was there is left as it was");
}

}  // namespace

void check_report_files(const std::vector<ReportFile>& files, bool force) {
  std::map<fs::path, const ReportFile*> seen;
  for (const ReportFile& file : files) {
    if (file.path.empty()) throw Error(file.option + ": the path is empty: give a file's path");
    const fs::path path(file.path);
    if (!path.has_filename()) throw Error(where(file) + ": ends in '/', a directory: give a file's path");
    const fs::path directory = directory_of(path);
    struct stat info {};
    if (stat(directory.c_str(), &info) != 0) {
      throw Error(where(file) + ": directory " + excerpt(directory.string()) + ": " + errno_text(errno) +
                  ": create it first");
    }
    if (!S_ISDIR(info.st_mode)) throw Error(where(file) + ": " + excerpt(directory.string()) + " is not a directory");
    if (lstat(path.c_str(), &info) == 0) {
      check_existing(file, info, force);
    } else if (errno != ENOENT) {
      throw Error(where(file) + ": " + errno_text(errno));
    }
    const auto [fd, temporary] = create_temporary(directory, path.filename().string());
    if (fd < 0) {
      throw Error(where(file) + ": cannot create a file in " + excerpt(directory.string()) + ": " + errno_text(errno) +
                  ": give a writable directory");
    }
    close(fd);
    unlink(temporary.c_str());
    const fs::path identity = fs::canonical(directory) / path.filename();
    const auto [previous, inserted] = seen.emplace(identity, &file);
    if (!inserted) {
      throw Error(previous->second->option + " and " + file.option + " name the same file " + excerpt(file.path) +
                  ": give each report its own path");
    }
  }
}

void write_report_file(const ReportFile& file, const std::string& text) {
  const fs::path path(file.path);
  const auto [fd, temporary] = create_temporary(directory_of(path), path.filename().string());
  if (fd < 0) throw Error(where(file) + ": cannot create a file next to it: " + errno_text(errno));
  struct stat existing {};
  if (stat(path.c_str(), &existing) == 0 && S_ISREG(existing.st_mode) && fchmod(fd, existing.st_mode & 07777) != 0) {
    abandon(file, temporary, fd, "cannot give the new file the old one's permissions");
  }
  for (size_t written = 0; written < text.size();) {
    const ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) abandon(file, temporary, fd, "writing failed");
    written += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) abandon(file, temporary, fd, "writing failed");
  if (close(fd) != 0) abandon(file, temporary, -1, "writing failed");
  if (rename(temporary.c_str(), path.c_str()) != 0) abandon(file, temporary, -1, "cannot replace it");
}

}  // namespace native_ops::cli
