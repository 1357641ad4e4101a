// How streammap's messages and explanations write numbers: one rule for every place that prints a cost,
// a period or a share.
#ifndef STREAMMAP_NUMBER_FORMAT_H
#define STREAMMAP_NUMBER_FORMAT_H

#include <cstdio>
#include <string>

namespace dispar::streammap {

/// Six significant digits, as printf's %g: "0.00153626", "5", "1e+300".
inline std::string formatNumber(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", x);
  return buffer;
}

/// A share as a percentage with one decimal: 0.0123 -> "1.2%".
inline std::string formatPercent(double share) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f%%", 100 * share);
  return buffer;
}

}  // namespace dispar::streammap

#endif
