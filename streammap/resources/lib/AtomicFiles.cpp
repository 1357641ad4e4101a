#include "streammap/AtomicFiles.h"

#include "dispar_lang/OutputTarget.h"
#include "streammap/Cluster.h"
#include "streammap/FileDescriptor.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace dispar::streammap {

namespace {

bool writeAll(const std::string& path, const std::string& contents, std::string& error) {
  FileDescriptor fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (fd.get() < 0) {
    error = escapedForDisplay(path) + ": cannot create: " + std::strerror(errno);
    return false;
  }
  std::size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd.get(), contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = escapedForDisplay(path) + ": write failed: " + std::strerror(errno);
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd.get()) != 0 || !fd.close()) {
    error = escapedForDisplay(path) + ": flush failed: " + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace

bool AtomicFileSet::commit(std::string& error) {
  // Every target first, by the one rule (dispar_lang/OutputTarget.h): a device, FIFO, directory or
  // read-only file refuses the whole set before anything is written.
  std::vector<lang::OutputTarget> targets(files_.size());
  for (std::size_t i = 0; i < files_.size(); ++i)
    if (!lang::resolveOutputTarget(files_[i].first, targets[i], error)) return false;
  std::vector<std::string> temporaries;
  auto removeTemporaries = [&] {
    for (const std::string& t : temporaries) ::unlink(t.c_str());
  };
  for (std::size_t i = 0; i < files_.size(); ++i) {
    const std::string temporary = targets[i].path + ".tmp." + std::to_string(::getpid());
    temporaries.push_back(temporary);
    if (!writeAll(temporary, files_[i].second, error) || !lang::keepTargetMode(temporary, targets[i], error)) {
      removeTemporaries();
      return false;
    }
  }
  for (std::size_t i = 0; i < files_.size(); ++i) {
    if (std::rename(temporaries[i].c_str(), targets[i].path.c_str()) != 0) {
      error = escapedForDisplay(files_[i].first) + ": cannot replace: " + std::strerror(errno);
      removeTemporaries();
      return false;
    }
  }
  return true;
}

bool readFile(const std::string& path, std::string& out, std::string& error) {
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    error = escapedForDisplay(path) + ": cannot open: " + std::strerror(errno);
    return false;
  }
  // Read in place into a string sized by fstat (a 40 MB RTG grown by appends is copied again at each
  // doubling); it still grows past that size for a file that grows or reports none (a pipe).
  struct stat st{};
  std::size_t capacity = ::fstat(fd.get(), &st) == 0 && st.st_size > 0 ? static_cast<std::size_t>(st.st_size) : 0;
  std::string text(capacity + 1, '\0');
  std::size_t size = 0;
  for (;;) {
    if (size == text.size()) text.resize(2 * text.size() + (1 << 16));
    const ssize_t n = ::read(fd.get(), text.data() + size, text.size() - size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = escapedForDisplay(path) + ": read failed: " + std::strerror(errno);
      return false;
    }
    if (n == 0) break;
    size += static_cast<std::size_t>(n);
  }
  text.resize(size);
  out = std::move(text);
  return true;
}

bool writeFileAtomically(const std::string& path, const std::string& text, std::string& error) {
  AtomicFileSet file;
  file.add(path, text);
  return file.commit(error);
}

bool fileExists(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace dispar::streammap
