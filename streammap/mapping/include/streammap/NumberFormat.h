// How streammap's messages and explanations write numbers: one rule for every place that prints a cost,
// a period or a share.
#ifndef STREAMMAP_NUMBER_FORMAT_H
#define STREAMMAP_NUMBER_FORMAT_H

#include <charconv>
#include <cstdio>
#include <string>

namespace dispar::streammap {

/// Six significant digits, as printf's %g: "0.00153626", "5", "1e+300". (std::to_chars writes what
/// printf writes, several times faster: a 100,000-vertex map formats a cost per vertex.)
inline std::string formatNumber(double x) {
  char buffer[32];
  return std::string(buffer, std::to_chars(buffer, buffer + sizeof buffer, x, std::chars_format::general, 6).ptr);
}

/// A share as a percentage with one decimal: 0.0123 -> "1.2%".
inline std::string formatPercent(double share) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f%%", 100 * share);
  return buffer;
}

/// Every digit a double holds, exactly as printf's %.17g writes it: the text digests hash (a cluster's,
/// the costs'), which must not change from one version to the next. std::to_chars with precision 17 is
/// specified to write what printf does, several times faster (200,000 numbers per 100,000-vertex map).
inline void appendDigestNumber(std::string& out, double x) {
  char buffer[32];
  out.append(buffer, std::to_chars(buffer, buffer + sizeof buffer, x, std::chars_format::general, 17).ptr);
}

}  // namespace dispar::streammap

#endif
