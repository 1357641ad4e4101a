// Reports DISPAR's own diagnostics through Clang's DiagnosticsEngine, so they print like Clang's own
// (file:line:col, source line, caret) and count towards its error total.
#ifndef DISPAR_FRONTEND_DISPAR_DIAGNOSTICS_H
#define DISPAR_FRONTEND_DISPAR_DIAGNOSTICS_H

#include "clang/Basic/Diagnostic.h"

#include <array>

namespace dispar::frontend {

enum class Diag : unsigned {
#define DIAG(Id, Level, Message) Id,
#include "frontend/DisparDiagnostics.def"
#undef DIAG
  Count
};

class DisparDiagnostics {
 public:
  explicit DisparDiagnostics(clang::DiagnosticsEngine& engine);
  clang::DiagnosticBuilder report(clang::SourceLocation loc, Diag diag);
  clang::DiagnosticsEngine& engine() { return engine_; }
  /// Errors reported through this object (as opposed to Clang's own).
  unsigned errorCount() const { return errorCount_; }

 private:
  clang::DiagnosticsEngine& engine_;
  std::array<unsigned, static_cast<unsigned>(Diag::Count)> ids_{};
  unsigned errorCount_ = 0;
};

}  // namespace dispar::frontend

#endif
