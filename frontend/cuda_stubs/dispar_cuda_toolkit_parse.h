// Parse-only additions to the CUDA toolkit's headers: what the frontend force-includes (-include) when
// it parses a CUDA program with a toolkit. Clang 19's CUDA wrapper leaves out the cache-hinted loads and
// stores (__ldcs, __stcs, ...; <dispar/hostk/CacheHints.def>) and the surface functions, which nvcc declares. They are
// declared here, typed after their dispar::hostk counterparts, so that the frontend accepts and rewrites them as nvcc
// compiles them; host-and-device, as a device function could not name the host counterpart in its type.
// Nothing here is compiled to code.
#ifndef DISPAR_CUDA_TOOLKIT_PARSE_H
#define DISPAR_CUDA_TOOLKIT_PARSE_H

#if !defined(__clang__) || !defined(__CUDA__)
#error "dispar_cuda_toolkit_parse.h is the DISPAR frontend's CUDA prelude; it is only meaningful to Clang in CUDA mode"
#endif

#include <dispar/hostk/Math.h>

#define DISPAR_HOSTK_BUILTIN(Kind, CudaName, HostName, Summary)                                                        \
  template <class... Args>                                                                                             \
  __attribute__((host, device)) auto CudaName(Args&&... args)                                                          \
      -> decltype(::dispar::hostk::HostName(static_cast<Args&&>(args)...));
#include <dispar/hostk/CacheHints.def>
#undef DISPAR_HOSTK_BUILTIN

// Clang's CUDA wrapper leaves out the surface functions too.
#include "dispar_surface_functions.h"

#endif  // DISPAR_CUDA_TOOLKIT_PARSE_H
