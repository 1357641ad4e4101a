// disparcc: compiles a DISPAR .dsp program into an MPI program and its RTG.
#include "streamcc/Driver.h"

int main(int argc, char** argv) { return dispar::streamcc::disparccMain(argc, argv); }
