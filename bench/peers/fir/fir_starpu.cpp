// The paper's FIR (examples/fir/fir.dsp) in StarPU with StarPU-MPI, as StarPU's documentation teaches:
// three codelets (make a frame, filter it, check it), a data handle per frame's input and output and one
// for the checker's running state, every task submitted on every rank with starpu_mpi_task_insert in frame
// order; StarPU runs them as their data allow (frame f + 1 made while f is filtered), the checks one after
// another through the state they update. Frame f's data belong to rank f % R; the state to rank 0, which
// prints what examples/fir/fir.dsp's sink prints, from the same arithmetic.
// Usage: mpiexec -n R ./fir_starpu [frames [frame_size]]   (default 64 frames of 65536 samples)
#include <mpi.h>
#include <starpu.h>
#include <starpu_mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

constexpr int kTaps = 32;
constexpr int kHistory = kTaps - 1;

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

struct FrameArgs {
  long frame, size;
};

struct CheckState {
  long frames, offset;
  double maxError, checksum;
};

// Frame f's input: the kHistory samples before it (zeros before the signal starts), then its samples.
void makeFrame(void* buffers[], void* cl_arg) {
  FrameArgs args;
  starpu_codelet_unpack_args(cl_arg, &args);
  float* in = reinterpret_cast<float*>(STARPU_VECTOR_GET_PTR(buffers[0]));
  const long first = args.frame * args.size - kHistory;
  for (long j = 0; j < kHistory + args.size; ++j) in[j] = first + j < 0 ? 0.0f : signalSample(first + j);
}

void filterFrame(void* buffers[], void*) {
  static const std::vector<float> taps = firTaps();
  const float* in = reinterpret_cast<const float*>(STARPU_VECTOR_GET_PTR(buffers[0]));
  float* out = reinterpret_cast<float*>(STARPU_VECTOR_GET_PTR(buffers[1]));
  const long count = static_cast<long>(STARPU_VECTOR_GET_NX(buffers[1]));
  for (long i = 0; i < count; ++i) {
    float acc = 0.0f;
    for (int k = 0; k < kTaps; ++k) acc += taps[k] * in[i + kHistory - k];
    out[i] = acc;
  }
}

// Every output against the reference convolution in double precision, as fir.dsp's sink checks it.
void checkFrame(void* buffers[], void*) {
  static const std::vector<float> taps = firTaps();
  const float* out = reinterpret_cast<const float*>(STARPU_VECTOR_GET_PTR(buffers[0]));
  CheckState* state = reinterpret_cast<CheckState*>(STARPU_VARIABLE_GET_PTR(buffers[1]));
  const long size = static_cast<long>(STARPU_VECTOR_GET_NX(buffers[0]));
  std::vector<double> signal(kHistory + size);
  for (long j = 0; j < kHistory + size; ++j) {
    const long n = state->offset - kHistory + j;
    signal[j] = n < 0 ? 0.0 : signalSample(n);
  }
  for (long i = 0; i < size; ++i) {
    state->checksum += out[i];
    double reference = 0.0;
    for (int k = 0; k < kTaps; ++k) reference += double(taps[k]) * signal[kHistory + i - k];
    state->maxError = std::fmax(state->maxError, std::fabs(out[i] - reference));
  }
  state->offset += size;
  ++state->frames;
}

starpu_codelet codelet(starpu_cpu_func_t function, int buffers, const char* name) {
  starpu_codelet c;
  starpu_codelet_init(&c);
  c.cpu_funcs[0] = function;
  c.nbuffers = buffers;
  c.name = name;
  return c;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const long frames = argc > 1 ? std::atol(argv[1]) : 64, size = argc > 2 ? std::atol(argv[2]) : 65536;
  if (frames < 1 || size < 1) {
    if (rank == 0) std::fprintf(stderr, "usage: fir_starpu [frames [frame_size]]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (starpu_mpi_init_conf(&argc, &argv, 0, MPI_COMM_WORLD, nullptr) != 0) {
    std::fprintf(stderr, "fir_starpu: starpu_mpi_init_conf failed\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  starpu_codelet make = codelet(makeFrame, 1, "make_frame"), filter = codelet(filterFrame, 2, "filter"),
                 check = codelet(checkFrame, 2, "check");
  make.modes[0] = STARPU_W;
  filter.modes[0] = STARPU_R;
  filter.modes[1] = STARPU_W;
  check.modes[0] = STARPU_R;
  check.modes[1] = STARPU_RW;

  CheckState state{0, 0, 0.0, 0.0};
  starpu_data_handle_t stateHandle;
  if (rank == 0)
    starpu_variable_data_register(&stateHandle, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&state), sizeof(state));
  else
    starpu_variable_data_register(&stateHandle, -1, 0, sizeof(state));
  starpu_mpi_data_register(stateHandle, 0, 0);

  std::vector<starpu_data_handle_t> handles;
  for (long f = 0; f < frames; ++f) {
    const int owner = static_cast<int>(f % ranks);
    starpu_data_handle_t in, out;  // StarPU allocates them where the tasks need them
    starpu_vector_data_register(&in, -1, 0, kHistory + size, sizeof(float));
    starpu_vector_data_register(&out, -1, 0, size, sizeof(float));
    starpu_mpi_data_register(in, 1 + 2 * f, owner);
    starpu_mpi_data_register(out, 2 + 2 * f, owner);
    FrameArgs args{f, size};
    starpu_mpi_task_insert(MPI_COMM_WORLD, &make, STARPU_W, in, STARPU_VALUE, &args, sizeof(args), 0);
    starpu_mpi_task_insert(MPI_COMM_WORLD, &filter, STARPU_R, in, STARPU_W, out, 0);
    starpu_mpi_task_insert(MPI_COMM_WORLD, &check, STARPU_R, out, STARPU_RW, stateHandle, 0);
    starpu_data_unregister_submit(in);
    handles.push_back(out);
  }
  starpu_task_wait_for_all();
  starpu_mpi_wait_for_all(MPI_COMM_WORLD);
  for (starpu_data_handle_t out : handles) starpu_data_unregister(out);
  starpu_data_unregister(stateHandle);
  starpu_mpi_shutdown();
  if (rank == 0) std::printf("frames=%ld max_error=%.3g checksum=%.6f\n", state.frames, state.maxError, state.checksum);
  MPI_Finalize();
  return 0;
}
