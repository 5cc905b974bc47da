#pragma once
// Report files (--junit, --json-file, --csv, --svg, tune's -o and --results): checked before a command's work
// starts, written atomically after it.

#include <string>
#include <vector>

namespace native_ops::cli {

/// What a report file holds; an existing file is replaced only by a report of its kind.
enum class ReportKind { junit, bench_json, bench_csv, bench_svg, tuned_policy };

/// One report a command will write.
struct ReportFile {
  std::string option;  // "--csv", for messages
  std::string path;
  ReportKind kind;
};

/// Checks, before any work, that every report can be written where asked: the paths are
/// pairwise different files; each directory exists and takes a new file; an existing
/// target is a regular file (not a symbolic link) holding a report of the same kind, or
/// empty, unless `force`. Throws native_ops::Error naming the option, the path, what is
/// wrong and the fix; nothing is created or changed.
void check_report_files(const std::vector<ReportFile>& files, bool force);

/// Writes `text` to a new file next to `file.path`, then renames it over the path: a
/// reader sees the old file or the whole new one, never a part. An existing file keeps
/// its permissions. Throws native_ops::Error with the reason; the old file is then untouched.
void write_report_file(const ReportFile& file, const std::string& text);

}  // namespace native_ops::cli
