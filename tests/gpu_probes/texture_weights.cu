// Texture-filter probe: each corner's weight of bilinear and trilinear filtering as the GPU computes it.
//
// Not part of the suite (it needs a GPU). It is how the host path's rule for linear filtering
// (runtime/hostk/Textures.cpp, cornerWeights) was found on an NVIDIA H200 on 2026-11-30:
//   here:         /usr/local/cuda/bin/nvcc -O2 -arch=sm_90 -o texture_weights tests/gpu_probes/texture_weights.cu
//   on the GPU:   ./texture_weights > weights.txt   (device tool: the binary travels as an untracked file)
// Each line is "2 a b w0 w1 w2 w3" or "3 a b c w0 ... w7": the fractions in 256ths past the first texel's
// centre along x, y (and z), and corner c's weight in 256ths, corner c upper along axis d when bit d of c is
// set. Each weight is read through its own texture, one texel 1 and the others 0 (an indicator texture).
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
__global__ void sample2(float* out, const float4* c, int n, cudaTextureObject_t tex) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float>(tex, c[i].x, c[i].y);
}
__global__ void sample3(float* out, const float4* c, int n, cudaTextureObject_t tex) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex3D<float>(tex, c[i].x, c[i].y, c[i].z);
}
int main() {
  const int E = 16;
  cudaChannelFormatDesc d = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
  cudaTextureDesc td = {};
  td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = cudaAddressModeClamp;
  td.filterMode = cudaFilterModeLinear; td.readMode = cudaReadModeElementType; td.normalizedCoords = 0;
  cudaTextureObject_t t2[4], t3[8];
  for (int k = 0; k < 4; ++k) {
    std::vector<float> v(E * E);
    for (int y = 0; y < E; ++y) for (int x = 0; x < E; ++x) v[y * E + x] = ((x & 1) | ((y & 1) << 1)) == k;
    cudaArray_t a; CK(cudaMallocArray(&a, &d, E, E));
    CK(cudaMemcpy2DToArray(a, 0, 0, v.data(), E * 4, E * 4, E, cudaMemcpyHostToDevice));
    cudaResourceDesc r = {}; r.resType = cudaResourceTypeArray; r.res.array.array = a;
    CK(cudaCreateTextureObject(&t2[k], &r, &td, nullptr));
  }
  for (int k = 0; k < 8; ++k) {
    std::vector<float> v(E * E * E);
    for (int z = 0; z < E; ++z) for (int y = 0; y < E; ++y) for (int x = 0; x < E; ++x)
      v[(z * E + y) * E + x] = ((x & 1) | ((y & 1) << 1) | ((z & 1) << 2)) == k;
    cudaArray_t a; CK(cudaMalloc3DArray(&a, &d, make_cudaExtent(E, E, E)));
    cudaMemcpy3DParms p = {};
    p.srcPtr = make_cudaPitchedPtr(v.data(), E * 4, E, E); p.dstArray = a; p.extent = make_cudaExtent(E, E, E);
    p.kind = cudaMemcpyHostToDevice;
    CK(cudaMemcpy3D(&p));
    cudaResourceDesc r = {}; r.resType = cudaResourceTypeArray; r.res.array.array = a;
    CK(cudaCreateTextureObject(&t3[k], &r, &td, nullptr));
  }
  // Fractions k/256 on each axis: every pair (2-D) and random triples (3-D).
  std::vector<float4> c2, c3;
  std::vector<int> k2, k3;
  for (int a = 0; a < 256; ++a) for (int b = 0; b < 256; ++b) {
    c2.push_back(make_float4(5.5f + a / 256.0f, 6.5f + b / 256.0f, 0, 0)); k2.push_back(a * 256 + b);
  }
  srand(7);
  for (int i = 0; i < 65536; ++i) {
    int a = rand() % 256, b = rand() % 256, cc = rand() % 256;
    c3.push_back(make_float4(5.5f + a / 256.0f, 6.5f + b / 256.0f, 7.5f + cc / 256.0f, 0)); k3.push_back((a * 256 + b) * 256 + cc);
  }
  const int n = 65536;
  float4* dc; float* dout; CK(cudaMalloc(&dc, n * sizeof(float4))); CK(cudaMalloc(&dout, n * 4));
  std::vector<float> w2(4 * n), w3(8 * n);
  CK(cudaMemcpy(dc, c2.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
  for (int k = 0; k < 4; ++k) {
    sample2<<<n / 256, 256>>>(dout, dc, n, t2[k]); CK(cudaGetLastError());
    CK(cudaMemcpy(w2.data() + k * n, dout, n * 4, cudaMemcpyDeviceToHost));
  }
  CK(cudaMemcpy(dc, c3.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
  for (int k = 0; k < 8; ++k) {
    sample3<<<n / 256, 256>>>(dout, dc, n, t3[k]); CK(cudaGetLastError());
    CK(cudaMemcpy(w3.data() + k * n, dout, n * 4, cudaMemcpyDeviceToHost));
  }
  // The samples' lower texels are x 5, y 6, z 7: corner c's texel has parities (5, 6, 7) + its bits.
  auto parityClass = [](int corner) { return ((corner & 1) ^ 1) | (corner & 2) | ((corner & 4) ^ 4); };
  for (int i = 0; i < n; ++i) {
    std::printf("2 %d %d", k2[i] / 256, k2[i] % 256);
    for (int c = 0; c < 4; ++c) std::printf(" %d", int(w2[parityClass(c) * n + i] * 256.0f + 0.5f));
    std::printf("\n");
  }
  for (int i = 0; i < n; ++i) {
    std::printf("3 %d %d %d", k3[i] / 65536, k3[i] / 256 % 256, k3[i] % 256);
    for (int c = 0; c < 8; ++c) std::printf(" %d", int(w3[parityClass(c) * n + i] * 256.0f + 0.5f));
    std::printf("\n");
  }
  return 0;
}
