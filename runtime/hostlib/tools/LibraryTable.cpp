// Prints the cuBLAS and cuFFT calls the host stand-ins cover, as docs/libraries.md embeds them.
#include <dispar/hostlib/LibraryTable.h>

#include <cstdio>

int main() {
  std::fputs(dispar::hostlib::libraryMarkdownTable().c_str(), stdout);
  return 0;
}
