// Empty stand-in: CUDA 13 removed this header, which Clang 19's CUDA wrapper still includes.
