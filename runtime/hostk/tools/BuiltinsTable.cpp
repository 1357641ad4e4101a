// Prints the host path's rewriting table (dispar/hostk/Builtins.def) as a Markdown table; docs/cuda.md
// embeds this output between its "builtins-table" markers.
#include <dispar/hostk/Builtins.h>

#include <iostream>

int main() {
  std::cout << dispar::hostk::builtinsMarkdownTable();
  return 0;
}
