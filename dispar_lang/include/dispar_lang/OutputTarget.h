// The one rule for where a DISPAR tool may write a file a user named: disparcc -o, --emit-*, -MF, -MJ;
// streammap map/sbatch -o, --dot, cluster export -o; the runtime's DISPAR_PROFILE. Every writer resolves
// its path here first, then writes a temporary beside the target and renames it over the target.
#ifndef DISPAR_LANG_OUTPUT_TARGET_H
#define DISPAR_LANG_OUTPUT_TARGET_H

#include <string>

namespace dispar::lang {

/// What a path resolves to as an output:
/// - nothing there: a new file in the path's directory (which must exist), mode 0644 less the umask;
/// - a regular file: replaced (atomically, by rename), keeping its mode; refused when read-only (no write
///   bit), since replacing it would silently undo that;
/// - a symbolic link: its target, by these same rules (the link stays a link); a dangling link is refused;
/// - a directory, character or block device, FIFO or socket: refused, never replaced (`-o /dev/null`
///   would otherwise replace the machine's /dev/null with a regular file).
struct OutputTarget {
  std::string path;      // the file a temporary is renamed over: the path given, or a link's target
  bool exists = false;   // a regular file is there now
  unsigned mode = 0644;  // the existing file's permission bits, to give the replacement
};

/// Resolves `path` by the rule above; false with `error` ("'x': is a FIFO; ...") when it is refused.
bool resolveOutputTarget(const std::string& path, OutputTarget& out, std::string& error);

/// Gives the written temporary the target's mode when it replaces an existing file (chmod); false with
/// `error` on failure.
bool keepTargetMode(const std::string& temporary, const OutputTarget& target, std::string& error);

}  // namespace dispar::lang

#endif
