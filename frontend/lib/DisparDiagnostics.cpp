#include "frontend/DisparDiagnostics.h"

namespace dispar::frontend {

namespace {
struct DiagInfo {
  clang::DiagnosticIDs::Level level;
  const char* message;
};
constexpr DiagInfo kDiagTable[] = {
#define DIAG(Id, Level, Message) {clang::DiagnosticIDs::Level, Message},
#include "frontend/DisparDiagnostics.def"
#undef DIAG
};
static_assert(std::size(kDiagTable) == static_cast<unsigned>(Diag::Count));
}  // namespace

DisparDiagnostics::DisparDiagnostics(clang::DiagnosticsEngine& engine) : engine_(engine) {
  for (unsigned i = 0; i < ids_.size(); ++i)
    ids_[i] = engine_.getDiagnosticIDs()->getCustomDiagID(kDiagTable[i].level, kDiagTable[i].message);
}

clang::DiagnosticBuilder DisparDiagnostics::report(clang::SourceLocation loc, Diag diag) {
  if (kDiagTable[static_cast<unsigned>(diag)].level == clang::DiagnosticIDs::Error) ++errorCount_;
  return engine_.Report(loc, ids_[static_cast<unsigned>(diag)]);
}

}  // namespace dispar::frontend
