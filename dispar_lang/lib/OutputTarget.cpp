#include "dispar_lang/OutputTarget.h"

#include "dispar_lang/DisplayText.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>

namespace dispar::lang {

namespace {

const char* kindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string directoryOf(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

bool resolveOutputTarget(const std::string& path, OutputTarget& out, std::string& error) {
  if (path.empty()) {
    error = "an empty output path";
    return false;
  }
  out = OutputTarget{path, false, 0644};
  const std::string shown = escapedForDisplay(path);  // a path may hold anything, a newline included
  struct stat st{};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) {
      error = "'" + shown + "': " + std::strerror(errno);
      return false;
    }
    struct stat dir{};
    const std::string directory = directoryOf(path);
    if (::stat(directory.c_str(), &dir) != 0 || !S_ISDIR(dir.st_mode)) {
      error = "'" + shown + "': no directory '" + escapedForDisplay(directory) + "'";
      return false;
    }
    return true;
  }
  if (S_ISLNK(st.st_mode)) {
    // The link's target is the output: resolved once, whatever chain of links leads there.
    char resolved[PATH_MAX];
    if (::realpath(path.c_str(), resolved) == nullptr || ::stat(resolved, &st) != 0) {
      error = "'" + shown + "': a symbolic link to a missing file; name the file itself";
      return false;
    }
    out.path = resolved;
  }
  if (!S_ISREG(st.st_mode)) {
    error = "'" + shown + "'" +
            (out.path != path ? " (a link to '" + escapedForDisplay(out.path) + "')" : std::string()) + ": is " +
            kindOf(st.st_mode) + "; not replaced (name a regular file)";
    return false;
  }
  if ((st.st_mode & 0222) == 0) {
    error = "'" + shown + "': is read-only; not replaced (remove it or make it writable first)";
    return false;
  }
  out.exists = true;
  out.mode = static_cast<unsigned>(st.st_mode & 07777);
  return true;
}

bool keepTargetMode(const std::string& temporary, const OutputTarget& target, std::string& error) {
  if (!target.exists || ::chmod(temporary.c_str(), static_cast<mode_t>(target.mode)) == 0) return true;
  error = "'" + escapedForDisplay(temporary) + "': cannot give it the mode of '" + escapedForDisplay(target.path) +
          "': " + std::strerror(errno);
  return false;
}

}  // namespace dispar::lang
