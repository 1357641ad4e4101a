// The FIR filter of examples/fir/fir.dsp written by hand with MPI + CUDA, as a programmer would without
// DISPAR (the paper's baseline). The work of each rank is fixed by hand: rank 0 the source, ranks 1 and 2
// the filter (frame f to rank 1 + f % 2), rank 3 the sink. Where a rank runs is the launcher's business:
// the machinefile decides (paper4.machinefile, mixed8.machinefile: worked out by hand).
//
//   mpiexec -f MACHINEFILE -n 4 ./fir_mpi_cuda [frames [frame_size]]     default: 64 frames of 65536
//
// Without nvcc (mpicxx -x c++) or without a GPU the filter runs as a CPU loop with the same arithmetic.
// Built for SimGrid with -DFIR_SIMULATED_GPU, the filter is charged to the simulated host's GPU by the
// same rule as DISPAR's kernels (dispar/smpi/SimulatedGpu.h), so that the two are compared fairly.
#include <mpi.h>
#ifdef __CUDACC__
#include <cuda_runtime.h>
#endif
#ifdef FIR_SIMULATED_GPU
#include <dispar/smpi/SimulatedGpu.h>
#endif
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

// -DFIR_TAPS=N sets the filter's length; -DFIR_CHECK_EVERY=N makes the sink check only output i with
// i % N == 0 (bench/paper: a long filter checked sparsely, so that filtering dominates as in the paper).
#ifndef FIR_TAPS
#define FIR_TAPS 32
#endif
#ifndef FIR_CHECK_EVERY
#define FIR_CHECK_EVERY 1
#endif
constexpr int kTaps = FIR_TAPS;
constexpr long kCheckEvery = FIR_CHECK_EVERY;
constexpr int kHistory = kTaps - 1;
constexpr int kThreadsPerBlock = 256;
constexpr int kOutputsPerThread = 4;
constexpr int kFrameTag = 1;  // a frame; an empty one ends the stream

#define CHECK_MPI(call)                                                                       \
  do {                                                                                        \
    if (int code_ = (call); code_ != MPI_SUCCESS) {                                           \
      std::fprintf(stderr, "fir: %s failed at %s:%d (error %d)\n", #call, __FILE__, __LINE__, code_); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                           \
    }                                                                                         \
  } while (0)

float signalSample(long n) {
  return float(std::sin(0.013 * n) + 0.5 * std::sin(0.37 * n) + 0.1 * (double((n * 7919) % 101) / 101.0 - 0.5));
}

std::vector<float> firTaps() {
  const double pi = std::acos(-1.0);
  std::vector<float> taps(kTaps);
  for (int k = 0; k < kTaps; ++k) {
    double m = k - (kTaps - 1) / 2.0;
    double sinc = m == 0 ? 0.2 : std::sin(0.2 * pi * m) / (pi * m);
    taps[k] = float(sinc * (0.54 - 0.46 * std::cos(2 * pi * k / (kTaps - 1))));
  }
  return taps;
}

long argumentOr(int argc, char** argv, int index, long fallback) {
  if (index >= argc) return fallback;
  char* end = nullptr;
  const long value = std::strtol(argv[index], &end, 10);
  if (*end != '\0' || value <= 0 || value > (1L << 28)) {
    std::fprintf(stderr, "fir: argument %d must be a number from 1 to 2^28, got '%s'\n", index, argv[index]);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return value;
}

// out[i] = sum_k taps[k] * in[i + kHistory - k]: the CPU version (no GPU, or no CUDA).
void firOnHost(const float* in, const float* taps, float* out, int count) {
  for (int i = 0; i < count; ++i) {
    float acc = 0.0f;
    for (int k = 0; k < kTaps; ++k) acc += taps[k] * in[i + kHistory - k];
    out[i] = acc;
  }
}

#ifdef __CUDACC__
#define CHECK_CUDA(call)                                                                                  \
  do {                                                                                                    \
    if (cudaError_t code_ = (call); code_ != cudaSuccess) {                                               \
      std::fprintf(stderr, "fir: %s failed at %s:%d: %s\n", #call, __FILE__, __LINE__, cudaGetErrorString(code_)); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                       \
    }                                                                                                     \
  } while (0)

__global__ void firKernel(const float* in, const float* taps, float* out, int count) {
  __shared__ float sharedTaps[kTaps];
  for (int k = threadIdx.x; k < kTaps; k += blockDim.x) sharedTaps[k] = taps[k];
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
    float acc = 0.0f;
    for (int k = 0; k < kTaps; ++k) acc += sharedTaps[k] * in[i + kHistory - k];
    out[i] = acc;
  }
}

// The filter on this rank's GPU (the rank's index on its node picks one).
void firOnGpu(const std::vector<float>& in, const std::vector<float>& taps, std::vector<float>& out, int localRank) {
  static float *deviceTaps = nullptr, *deviceIn = nullptr, *deviceOut = nullptr;
  static std::size_t capacity = 0;
  if (deviceTaps == nullptr) {
    int devices = 0;
    CHECK_CUDA(cudaGetDeviceCount(&devices));
    CHECK_CUDA(cudaSetDevice(localRank % devices));
    CHECK_CUDA(cudaMalloc(&deviceTaps, kTaps * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(deviceTaps, taps.data(), kTaps * sizeof(float), cudaMemcpyHostToDevice));
  }
  const int count = int(out.size());
  if (std::size_t(count) > capacity) {
    CHECK_CUDA(cudaFree(deviceIn));
    CHECK_CUDA(cudaFree(deviceOut));
    CHECK_CUDA(cudaMalloc(&deviceIn, in.size() * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&deviceOut, count * sizeof(float)));
    capacity = count;
  }
  CHECK_CUDA(cudaMemcpy(deviceIn, in.data(), in.size() * sizeof(float), cudaMemcpyHostToDevice));
  const int blocks = (count + kThreadsPerBlock * kOutputsPerThread - 1) / (kThreadsPerBlock * kOutputsPerThread);
  firKernel<<<blocks, kThreadsPerBlock>>>(deviceIn, deviceTaps, deviceOut, count);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaMemcpy(out.data(), deviceOut, count * sizeof(float), cudaMemcpyDeviceToHost));
}

bool haveGpu() {
  int devices = 0;
  return cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
}
#endif

void source(long frameCount, long frameSize) {
  std::vector<float> frame(kHistory + frameSize, 0.0f);
  for (long f = 0; f < frameCount; ++f) {
    for (int h = 0; h < kHistory; ++h) frame[h] = f == 0 ? 0.0f : frame[frameSize + h];
    for (long i = 0; i < frameSize; ++i) frame[kHistory + i] = signalSample(f * frameSize + i);
    CHECK_MPI(MPI_Send(frame.data(), int(frame.size()), MPI_FLOAT, 1 + int(f % 2), kFrameTag, MPI_COMM_WORLD));
  }
  for (int worker = 1; worker <= 2; ++worker) CHECK_MPI(MPI_Send(nullptr, 0, MPI_FLOAT, worker, kFrameTag, MPI_COMM_WORLD));
}

void filter(int localRank) {
  const std::vector<float> taps = firTaps();
  std::vector<float> in, out;
  for (;;) {
    MPI_Status status;
    int size = 0;
    CHECK_MPI(MPI_Probe(0, kFrameTag, MPI_COMM_WORLD, &status));
    CHECK_MPI(MPI_Get_count(&status, MPI_FLOAT, &size));
    in.resize(size);
    CHECK_MPI(MPI_Recv(in.data(), size, MPI_FLOAT, 0, kFrameTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    if (size == 0) break;
    out.resize(size - kHistory);
    {
#ifdef FIR_SIMULATED_GPU
      dispar::smpi::SimulatedKernel simulated(localRank);  // the GPU firOnGpu picks
#endif
#ifdef __CUDACC__
      if (haveGpu()) firOnGpu(in, taps, out, localRank);
      else
#endif
        firOnHost(in.data(), taps.data(), out.data(), int(out.size()));
    }
    CHECK_MPI(MPI_Send(out.data(), int(out.size()), MPI_FLOAT, 3, kFrameTag, MPI_COMM_WORLD));
  }
  CHECK_MPI(MPI_Send(nullptr, 0, MPI_FLOAT, 3, kFrameTag, MPI_COMM_WORLD));
}

void sink() {
  const std::vector<float> taps = firTaps();
  std::vector<float> out;
  std::vector<double> signal;
  long frameCount = 0, offset = 0;
  double maxError = 0.0, checksum = 0.0;
  bool open[2] = {true, true};
  for (int next = 0; open[0] || open[1]; next = 1 - next) {  // frames alternate between the workers
    if (!open[next]) continue;
    MPI_Status status;
    int size = 0;
    CHECK_MPI(MPI_Probe(1 + next, kFrameTag, MPI_COMM_WORLD, &status));
    CHECK_MPI(MPI_Get_count(&status, MPI_FLOAT, &size));
    out.resize(size);
    CHECK_MPI(MPI_Recv(out.data(), size, MPI_FLOAT, 1 + next, kFrameTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    if (size == 0) {
      open[next] = false;
      continue;
    }
    signal.resize(kHistory + size);  // signal[j]: sample offset - kHistory + j, made when a check needs it
    long made = 0;                    // signal[0, made) holds the windows checked so far
    for (long i = 0; i < size; ++i) {
      checksum += out[i];
      if ((offset + i) % kCheckEvery != 0) continue;
      for (long j = std::max(made, i); j <= kHistory + i; ++j)  // output i's window: signal[i, kHistory + i]
        signal[j] = offset - kHistory + j < 0 ? 0.0 : signalSample(offset - kHistory + j);
      made = kHistory + i + 1;
      double reference = 0.0;
      for (int k = 0; k < kTaps; ++k) reference += double(taps[k]) * signal[kHistory + i - k];
      maxError = std::fmax(maxError, std::fabs(out[i] - reference));
    }
    offset += size;
    ++frameCount;
  }
  std::printf("frames=%ld max_error=%.3g checksum=%.6f\n", frameCount, maxError, checksum);
}

int main(int argc, char** argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 4) {
    if (rank == 0) std::fprintf(stderr, "fir: needs exactly 4 ranks (source, 2 filters, sink), got %d\n", size);
    MPI_Finalize();
    return 1;
  }
  const long frameCount = argumentOr(argc, argv, 1, 64), frameSize = argumentOr(argc, argv, 2, 65536);
  MPI_Comm node;  // the rank's index on its node picks its GPU
  int localRank = 0;
  CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  MPI_Comm_rank(node, &localRank);
  MPI_Comm_free(&node);
  if (rank == 0) source(frameCount, frameSize);
  else if (rank == 3) sink();
  else filter(localRank);
  MPI_Finalize();
  return 0;
}
