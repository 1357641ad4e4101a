// Writes a set of files all or nothing: each to a temporary beside its target, then, once every one is
// written and flushed, renamed over the targets.
#ifndef STREAMMAP_ATOMIC_FILES_H
#define STREAMMAP_ATOMIC_FILES_H

#include <string>
#include <utility>
#include <vector>

namespace dispar::streammap {

class AtomicFileSet {
 public:
  void add(std::string path, std::string contents) { files_.emplace_back(std::move(path), std::move(contents)); }
  /// On failure no target is touched (a rename failing half way is reported; the temporaries are
  /// removed) and `error` names the file and the reason.
  bool commit(std::string& error);
  /// The targets, in the order added ("wrote A, B and C").
  std::vector<std::string> paths() const {
    std::vector<std::string> out;
    for (const auto& file : files_) out.push_back(file.first);
    return out;
  }

 private:
  std::vector<std::pair<std::string, std::string>> files_;
};

/// One file, all or nothing (an AtomicFileSet of one): readers never see it half-written.
bool writeFileAtomically(const std::string& path, const std::string& text, std::string& error);

/// Reads a whole file; false with `error` naming the path and reason.
bool readFile(const std::string& path, std::string& out, std::string& error);

/// Whether anything exists at `path` (stat succeeds).
bool fileExists(const std::string& path);

}  // namespace dispar::streammap

#endif
