// Parses `#pragma streamap directive [clause[[,] clause]...]` against dispar_lang's clause table.
#ifndef DISPAR_FRONTEND_STREAMAP_PRAGMA_HANDLER_H
#define DISPAR_FRONTEND_STREAMAP_PRAGMA_HANDLER_H

#include "frontend/Directives.h"
#include "frontend/DisparDiagnostics.h"

#include "clang/Lex/Pragma.h"

namespace dispar::frontend {

class StreamapPragmaHandler : public clang::PragmaHandler {
 public:
  StreamapPragmaHandler(DirectiveTable& table, DisparDiagnostics& diags)
      : clang::PragmaHandler("streamap"), table_(table), diags_(diags) {}

  void HandlePragma(clang::Preprocessor& pp, clang::PragmaIntroducer introducer, clang::Token& firstToken) override;

 private:
  DirectiveTable& table_;
  DisparDiagnostics& diags_;
};

}  // namespace dispar::frontend

#endif
