// One printable line of a value that came from outside (a path, a host, GPU or VNODE name, a file's
// contents), shared by every tool that prints one: streammap, disparcc and the runtime.
#ifndef DISPAR_LANG_DISPLAY_TEXT_H
#define DISPAR_LANG_DISPLAY_TEXT_H

#include <cstdio>
#include <string>

namespace dispar::lang {

/// `text` as one printable line: control and non-ASCII bytes as \n, \t or \xHH, a backslash as \\, so
/// that no value can forge a line of a table, a comment or a message, or move a terminal's cursor. The
/// one function every printer of such a value uses.
inline std::string escapedForDisplay(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const unsigned char c : text) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c < 0x20 || c >= 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace dispar::lang

#endif
