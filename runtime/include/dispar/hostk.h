// dispar_hostk: CUDA kernels on the host. A CG VNODE whose rank gets no GPU runs the host clones that
// StreamCC makes of its kernels; this header is everything those clones and their launches call.
// See docs/cuda.md for the rewriting contract, the execution model and the limits.
#ifndef DISPAR_HOSTK_H
#define DISPAR_HOSTK_H

#include <dispar/hostk/Arch.h>
#include <dispar/hostk/Atomics.h>
#include <dispar/hostk/Builtins.h>
#include <dispar/hostk/CooperativeGroups.h>
#include <dispar/hostk/CudaNames.h>
#include <dispar/hostk/Kernel.h>
#include <dispar/hostk/Launch.h>
#include <dispar/hostk/Math.h>
#include <dispar/hostk/RuntimeApi.h>
#include <dispar/hostk/Textures.h>
#include <dispar/hostk/Types.h>
#include <dispar/hostk/Warp.h>

#endif  // DISPAR_HOSTK_H
