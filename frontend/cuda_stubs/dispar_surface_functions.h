// The surface functions of CUDA's surface_indirect_functions.h, which Clang's CUDA wrapper does not
// include: declared for the frontend's parses, with and without a toolkit (the force-included preludes
// include this file), so that surface reads and writes classify and rewrite as the Texture rows of
// <dispar/hostk/Builtins.def>. Declarations only; nothing here is compiled to code.
#ifndef DISPAR_SURFACE_FUNCTIONS_H
#define DISPAR_SURFACE_FUNCTIONS_H

#pragma clang force_cuda_host_device begin
template <class T>
T surf1Dread(cudaSurfaceObject_t surface, int x, cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap);
template <class T>
T surf2Dread(cudaSurfaceObject_t surface, int x, int y, cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap);
template <class T>
T surf3Dread(cudaSurfaceObject_t surface, int x, int y, int z, cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap);
template <class T>
T surf2DLayeredread(cudaSurfaceObject_t surface, int x, int y, int layer,
                    cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap);
template <class T>
void surf1Dread(T* value, cudaSurfaceObject_t surface, int x, cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap);
template <class T>
void surf2Dread(T* value, cudaSurfaceObject_t surface, int x, int y,
                cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap);
template <class T>
void surf3Dread(T* value, cudaSurfaceObject_t surface, int x, int y, int z,
                cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap);
template <class T>
void surf1Dwrite(T value, cudaSurfaceObject_t surface, int x, cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap);
template <class T>
void surf2Dwrite(T value, cudaSurfaceObject_t surface, int x, int y,
                 cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap);
template <class T>
void surf3Dwrite(T value, cudaSurfaceObject_t surface, int x, int y, int z,
                 cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap);
template <class T>
void surf2DLayeredwrite(T value, cudaSurfaceObject_t surface, int x, int y, int layer,
                        cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap);

#pragma clang force_cuda_host_device end

#endif  // DISPAR_SURFACE_FUNCTIONS_H
