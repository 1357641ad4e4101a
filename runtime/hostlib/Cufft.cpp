// cuFFT on the host path, over FFTW (fftw3 for double, fftw3f for single precision). A cuFFT plan
// records its shape and layout; the FFTW plans that run it are made at the first execution on given
// arrays (FFTW's new-array execution needs the same alignment and in-placeness as the planning arrays)
// and cached process-wide per shape, layout, direction and alignment, so equal plans share them.
// FFTW's planner is not thread-safe: planning holds one lock; executions run concurrently. Transforms
// are unnormalised and use cuFFT's layouts, which are FFTW's: R2C writes n/2+1 complex values in the
// last dimension, in-place real data is padded to 2*(n/2+1) reals.
#include <dispar/hostlib/StandIns.h>

#include <fftw3.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

namespace dispar::hostlib {
namespace {

// The version of the cuFFT API these stand-ins follow (cuFFT 12, CUDA 13).
constexpr int kCufftApiVersion = 12000;

bool validType(cufftType type) {
  switch (type) {
    case CUFFT_R2C:
    case CUFFT_C2R:
    case CUFFT_C2C:
    case CUFFT_D2Z:
    case CUFFT_Z2D:
    case CUFFT_Z2Z: return true;
  }
  return false;
}
bool isDouble(cufftType type) { return type == CUFFT_D2Z || type == CUFFT_Z2D || type == CUFFT_Z2Z; }
bool realToComplex(cufftType type) { return type == CUFFT_R2C || type == CUFFT_D2Z; }
bool complexToReal(cufftType type) { return type == CUFFT_C2R || type == CUFFT_Z2D; }

/// One side of a transform's data: embedding dimensions, stride, distance between batch members.
struct Layout {
  std::vector<int> embed;
  int stride = 1;
  int distance = 0;
  bool operator<(const Layout& other) const {
    return std::tie(embed, stride, distance) < std::tie(other.embed, other.stride, other.distance);
  }
};

/// A made cuFFT plan: everything FFTW needs but the arrays.
struct Shape {
  cufftType type = CUFFT_C2C;
  std::vector<int> n;
  int batch = 1;
  bool advanced = false;  // inembed/onembed given: the layouts below hold for in- and out-of-place alike
  Layout in, out;         // advanced layout (basic layouts depend on in-placeness: see layoutFor)
  bool operator<(const Shape& other) const {
    return std::tie(type, n, batch, advanced, in, out) <
           std::tie(other.type, other.n, other.batch, other.advanced, other.in, other.out);
  }
};

long long product(const std::vector<int>& dims) {
  long long total = 1;
  for (int d : dims) total *= d;
  return total;
}

/// cuFFT's basic layout for one side: contiguous, real data padded in place.
Layout basicLayout(const Shape& shape, bool inputSide, bool inPlace) {
  Layout layout;
  layout.embed = shape.n;
  const bool realSide = inputSide ? realToComplex(shape.type) : complexToReal(shape.type);
  const bool complexOfReal = !realSide && shape.type != CUFFT_C2C && shape.type != CUFFT_Z2Z;
  int& last = layout.embed.back();
  const int half = shape.n.back() / 2 + 1;
  if (complexOfReal)
    last = half;
  else if (realSide && inPlace)
    last = 2 * half;
  layout.distance = static_cast<int>(product(layout.embed));
  return layout;
}

struct PlanKey {
  Shape shape;
  int direction;
  bool inPlace;
  int inAlignment, outAlignment;
  bool operator<(const PlanKey& other) const {
    return std::tie(shape, direction, inPlace, inAlignment, outAlignment) <
           std::tie(other.shape, other.direction, other.inPlace, other.inAlignment, other.outAlignment);
  }
};

/// FFTW plans, process-wide. Never destroyed: a cuFFT plan destroyed and made again reuses them.
class PlanCache {
 public:
  /// The FFTW plan (fftw_plan or fftwf_plan) for `key`, made on `in`/`out` if new; null if FFTW cannot.
  void* get(const PlanKey& key, void* in, void* out) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = plans_.find(key);
    if (found != plans_.end()) return found->second;
    void* plan = make(key, in, out);
    if (plan != nullptr) plans_.emplace(key, plan);
    return plan;
  }

 private:
  static void* make(const PlanKey& key, void* in, void* out) {
    const Shape& shape = key.shape;
    const Layout inLayout = shape.advanced ? shape.in : basicLayout(shape, true, key.inPlace);
    const Layout outLayout = shape.advanced ? shape.out : basicLayout(shape, false, key.inPlace);
    const int rank = static_cast<int>(shape.n.size());
    const int* n = shape.n.data();
    const int* ie = inLayout.embed.data();
    const int* oe = outLayout.embed.data();
    const unsigned flags = FFTW_ESTIMATE;  // plans without touching the arrays, which hold the caller's data
    // One contiguous transform: FFTW's basic interface, which plans it as a direct caller's plan would
    // (the advanced interface may choose differently for a batch of one).
    if (shape.batch == 1 && !shape.advanced) {
      switch (shape.type) {
        case CUFFT_C2C:
          return fftwf_plan_dft(rank, n, static_cast<fftwf_complex*>(in), static_cast<fftwf_complex*>(out),
                                key.direction, flags);
        case CUFFT_Z2Z:
          return fftw_plan_dft(rank, n, static_cast<fftw_complex*>(in), static_cast<fftw_complex*>(out), key.direction,
                               flags);
        case CUFFT_R2C:
          return fftwf_plan_dft_r2c(rank, n, static_cast<float*>(in), static_cast<fftwf_complex*>(out), flags);
        case CUFFT_D2Z:
          return fftw_plan_dft_r2c(rank, n, static_cast<double*>(in), static_cast<fftw_complex*>(out), flags);
        case CUFFT_C2R:
          return fftwf_plan_dft_c2r(rank, n, static_cast<fftwf_complex*>(in), static_cast<float*>(out), flags);
        case CUFFT_Z2D:
          return fftw_plan_dft_c2r(rank, n, static_cast<fftw_complex*>(in), static_cast<double*>(out), flags);
      }
    }
    switch (shape.type) {
      case CUFFT_C2C:
        return fftwf_plan_many_dft(rank, n, shape.batch, static_cast<fftwf_complex*>(in), ie, inLayout.stride,
                                   inLayout.distance, static_cast<fftwf_complex*>(out), oe, outLayout.stride,
                                   outLayout.distance, key.direction, flags);
      case CUFFT_Z2Z:
        return fftw_plan_many_dft(rank, n, shape.batch, static_cast<fftw_complex*>(in), ie, inLayout.stride,
                                  inLayout.distance, static_cast<fftw_complex*>(out), oe, outLayout.stride,
                                  outLayout.distance, key.direction, flags);
      case CUFFT_R2C:
        return fftwf_plan_many_dft_r2c(rank, n, shape.batch, static_cast<float*>(in), ie, inLayout.stride,
                                       inLayout.distance, static_cast<fftwf_complex*>(out), oe, outLayout.stride,
                                       outLayout.distance, flags);
      case CUFFT_D2Z:
        return fftw_plan_many_dft_r2c(rank, n, shape.batch, static_cast<double*>(in), ie, inLayout.stride,
                                      inLayout.distance, static_cast<fftw_complex*>(out), oe, outLayout.stride,
                                      outLayout.distance, flags);
      case CUFFT_C2R:
        return fftwf_plan_many_dft_c2r(rank, n, shape.batch, static_cast<fftwf_complex*>(in), ie, inLayout.stride,
                                       inLayout.distance, static_cast<float*>(out), oe, outLayout.stride,
                                       outLayout.distance, flags);
      case CUFFT_Z2D:
        return fftw_plan_many_dft_c2r(rank, n, shape.batch, static_cast<fftw_complex*>(in), ie, inLayout.stride,
                                      inLayout.distance, static_cast<double*>(out), oe, outLayout.stride,
                                      outLayout.distance, flags);
    }
    return nullptr;
  }

  std::mutex mutex_;
  std::map<PlanKey, void*> plans_;
};

PlanCache& planCache() {
  static PlanCache* cache = new PlanCache();  // outlives every static destructor that might still execute
  return *cache;
}

/// An FFTW plan this cuFFT plan has executed with, and what it was made for besides the shape.
struct Variant {
  int direction;
  bool inPlace;
  int inAlignment, outAlignment;
  void* fftwPlan;
};

/// A cuFFT handle: made (shape known) or only created.
struct FftPlan {
  bool made = false;
  Shape shape;
  cudaStream_t stream = nullptr;
  // The FFTW plans it has run with: a repeated execution finds its plan here, without building a key
  // or taking the process-wide cache's lock.
  std::mutex variantsMutex;
  std::vector<Variant> variants;
};

class PlanRegistry {
 public:
  /// Changes whenever a handle is destroyed: a cached FftPlan pointer is valid while it is unchanged.
  std::uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  cufftHandle create() {
    std::lock_guard<std::mutex> lock(mutex_);
    const cufftHandle handle = next_++;
    plans_.emplace(handle, std::make_unique<FftPlan>());
    return handle;
  }
  FftPlan* find(cufftHandle handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = plans_.find(handle);
    return found == plans_.end() ? nullptr : found->second.get();
  }
  bool destroy(cufftHandle handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    generation_.fetch_add(1, std::memory_order_acq_rel);
    return plans_.erase(handle) == 1;
  }

 private:
  std::atomic<std::uint64_t> generation_{0};
  std::mutex mutex_;
  cufftHandle next_ = 1;
  std::map<cufftHandle, std::unique_ptr<FftPlan>> plans_;
};

PlanRegistry& registry() {
  static PlanRegistry* plans = new PlanRegistry();
  return *plans;
}

cufftResult makePlan(cufftHandle handle, int rank, const int* n, const int* inembed, int istride, int idist,
                     const int* onembed, int ostride, int odist, cufftType type, int batch, std::size_t* workSize) {
  FftPlan* plan = registry().find(handle);
  if (plan == nullptr || plan->made) return CUFFT_INVALID_PLAN;
  if (!validType(type)) return CUFFT_INVALID_TYPE;
  if (rank < 1 || rank > 3 || n == nullptr || batch < 1) return CUFFT_INVALID_SIZE;
  Shape shape;
  shape.type = type;
  shape.batch = batch;
  shape.n.assign(n, n + rank);
  for (int d : shape.n)
    if (d < 1) return CUFFT_INVALID_SIZE;
  // Advanced layout only with both embeddings (cuFFT ignores the other advanced parameters otherwise).
  if (inembed != nullptr && onembed != nullptr) {
    if (istride < 1 || ostride < 1 || idist < 1 || odist < 1) return CUFFT_INVALID_VALUE;
    shape.advanced = true;
    shape.in = Layout{std::vector<int>(inembed, inembed + rank), istride, idist};
    shape.out = Layout{std::vector<int>(onembed, onembed + rank), ostride, odist};
  }
  plan->shape = std::move(shape);
  plan->made = true;
  if (workSize != nullptr) *workSize = 0;  // FFTW allocates what it needs itself
  return CUFFT_SUCCESS;
}

// Creates a handle and makes it; on failure no handle is left behind.
cufftResult createAndMake(cufftHandle* handle, int rank, const int* n, const int* inembed, int istride, int idist,
                          const int* onembed, int ostride, int odist, cufftType type, int batch) {
  if (handle == nullptr) return CUFFT_INVALID_VALUE;
  const cufftHandle created = registry().create();
  const cufftResult result =
      makePlan(created, rank, n, inembed, istride, idist, onembed, ostride, odist, type, batch, nullptr);
  if (result != CUFFT_SUCCESS) {
    registry().destroy(created);
    return result;
  }
  *handle = created;
  return CUFFT_SUCCESS;
}

/// The last execution of this thread: a loop of executions on one plan (the common case, and the one
/// where a lookup's cost shows against a small transform) skips the registry and the variant list.
struct LastExecution {
  std::uint64_t generation = ~std::uint64_t{0};
  cufftHandle handle = 0;
  cufftType type = CUFFT_C2C;
  int direction = 0;
  bool inPlace = false;
  int inAlignment = 0, outAlignment = 0;
  void* in = nullptr;  // the arrays themselves: the same ones again need no alignment check
  void* out = nullptr;
  void* fftwPlan = nullptr;
};
thread_local LastExecution lastExecution;

void run(cufftType type, void* fftwPlan, void* in, void* out) {
  switch (type) {
    case CUFFT_C2C:
      fftwf_execute_dft(static_cast<fftwf_plan>(fftwPlan), static_cast<fftwf_complex*>(in),
                        static_cast<fftwf_complex*>(out));
      break;
    case CUFFT_Z2Z:
      fftw_execute_dft(static_cast<fftw_plan>(fftwPlan), static_cast<fftw_complex*>(in),
                       static_cast<fftw_complex*>(out));
      break;
    case CUFFT_R2C:
      fftwf_execute_dft_r2c(static_cast<fftwf_plan>(fftwPlan), static_cast<float*>(in),
                            static_cast<fftwf_complex*>(out));
      break;
    case CUFFT_D2Z:
      fftw_execute_dft_r2c(static_cast<fftw_plan>(fftwPlan), static_cast<double*>(in), static_cast<fftw_complex*>(out));
      break;
    case CUFFT_C2R:
      fftwf_execute_dft_c2r(static_cast<fftwf_plan>(fftwPlan), static_cast<fftwf_complex*>(in),
                            static_cast<float*>(out));
      break;
    case CUFFT_Z2D:
      fftw_execute_dft_c2r(static_cast<fftw_plan>(fftwPlan), static_cast<fftw_complex*>(in), static_cast<double*>(out));
      break;
  }
}

template <class In, class Out>
cufftResult execute(cufftHandle handle, In* idata, Out* odata, cufftType type, int direction) {
  void* in = const_cast<void*>(static_cast<const void*>(idata));
  void* out = static_cast<void*>(odata);
  const bool inPlace = in == out;
  const auto alignmentOf = [&](void* data) {
    return isDouble(type) ? fftw_alignment_of(static_cast<double*>(data))
                          : fftwf_alignment_of(static_cast<float*>(data));
  };
  // The thread's last plan serves again when the call is the same but for arrays that FFTW may take in
  // its place: the very same arrays, or arrays of the same in-placeness and alignment.
  LastExecution& last = lastExecution;
  if (last.handle == handle && last.type == type && last.direction == direction && in != nullptr && out != nullptr &&
      last.generation == registry().generation() &&
      ((in == last.in && out == last.out) ||
       (inPlace == last.inPlace && alignmentOf(in) == last.inAlignment && alignmentOf(out) == last.outAlignment))) {
    run(type, last.fftwPlan, in, out);
    last.in = in;
    last.out = out;
    return CUFFT_SUCCESS;
  }
  const int inAlignment = alignmentOf(in), outAlignment = alignmentOf(out);
  const std::uint64_t generation = registry().generation();
  FftPlan* plan = registry().find(handle);
  if (plan == nullptr || !plan->made) return CUFFT_INVALID_PLAN;
  if (plan->shape.type != type) return CUFFT_INVALID_PLAN;  // an Exec of another kind than the plan's
  if (idata == nullptr || odata == nullptr) return CUFFT_INVALID_VALUE;
  const int requested = direction;  // as the caller passes it: what the next call's fast path compares
  if (type == CUFFT_C2C || type == CUFFT_Z2Z) {
    if (direction != kCufftForward && direction != kCufftInverse) return CUFFT_INVALID_VALUE;
  } else {
    direction = realToComplex(type) ? kCufftForward : kCufftInverse;
  }
  void* fftwPlan = nullptr;
  {
    std::lock_guard<std::mutex> lock(plan->variantsMutex);
    for (const Variant& variant : plan->variants)
      if (variant.direction == direction && variant.inPlace == inPlace && variant.inAlignment == inAlignment &&
          variant.outAlignment == outAlignment)
        fftwPlan = variant.fftwPlan;
    if (fftwPlan == nullptr) {
      fftwPlan = planCache().get(PlanKey{plan->shape, direction, inPlace, inAlignment, outAlignment}, in, out);
      if (fftwPlan == nullptr) return CUFFT_SETUP_FAILED;
      plan->variants.push_back(Variant{direction, inPlace, inAlignment, outAlignment, fftwPlan});
    }
  }
  run(type, fftwPlan, in, out);
  last = LastExecution{generation, handle, type, requested, inPlace, inAlignment, outAlignment, in, out, fftwPlan};
  return CUFFT_SUCCESS;
}

}  // namespace

cufftResult host_cufftCreate(cufftHandle* plan) {
  if (plan == nullptr) return CUFFT_INVALID_VALUE;
  *plan = registry().create();
  return CUFFT_SUCCESS;
}
cufftResult host_cufftPlan1d(cufftHandle* plan, int nx, cufftType type, int batch) {
  return createAndMake(plan, 1, &nx, nullptr, 1, 0, nullptr, 1, 0, type, batch);
}
cufftResult host_cufftPlan2d(cufftHandle* plan, int nx, int ny, cufftType type) {
  const int n[] = {nx, ny};
  return createAndMake(plan, 2, n, nullptr, 1, 0, nullptr, 1, 0, type, 1);
}
cufftResult host_cufftPlan3d(cufftHandle* plan, int nx, int ny, int nz, cufftType type) {
  const int n[] = {nx, ny, nz};
  return createAndMake(plan, 3, n, nullptr, 1, 0, nullptr, 1, 0, type, 1);
}
cufftResult host_cufftPlanMany(cufftHandle* plan, int rank, int* n, int* inembed, int istride, int idist, int* onembed,
                               int ostride, int odist, cufftType type, int batch) {
  return createAndMake(plan, rank, n, inembed, istride, idist, onembed, ostride, odist, type, batch);
}
cufftResult host_cufftMakePlan1d(cufftHandle plan, int nx, cufftType type, int batch, std::size_t* workSize) {
  return makePlan(plan, 1, &nx, nullptr, 1, 0, nullptr, 1, 0, type, batch, workSize);
}
cufftResult host_cufftMakePlan2d(cufftHandle plan, int nx, int ny, cufftType type, std::size_t* workSize) {
  const int n[] = {nx, ny};
  return makePlan(plan, 2, n, nullptr, 1, 0, nullptr, 1, 0, type, 1, workSize);
}
cufftResult host_cufftMakePlan3d(cufftHandle plan, int nx, int ny, int nz, cufftType type, std::size_t* workSize) {
  const int n[] = {nx, ny, nz};
  return makePlan(plan, 3, n, nullptr, 1, 0, nullptr, 1, 0, type, 1, workSize);
}
cufftResult host_cufftMakePlanMany(cufftHandle plan, int rank, int* n, int* inembed, int istride, int idist,
                                   int* onembed, int ostride, int odist, cufftType type, int batch,
                                   std::size_t* workSize) {
  return makePlan(plan, rank, n, inembed, istride, idist, onembed, ostride, odist, type, batch, workSize);
}
cufftResult host_cufftGetSize(cufftHandle plan, std::size_t* workSize) {
  if (registry().find(plan) == nullptr) return CUFFT_INVALID_PLAN;
  if (workSize == nullptr) return CUFFT_INVALID_VALUE;
  *workSize = 0;
  return CUFFT_SUCCESS;
}
cufftResult host_cufftExecC2C(cufftHandle plan, cufftComplex* idata, cufftComplex* odata, int direction) {
  return execute(plan, idata, odata, CUFFT_C2C, direction);
}
cufftResult host_cufftExecR2C(cufftHandle plan, cufftReal* idata, cufftComplex* odata) {
  return execute(plan, idata, odata, CUFFT_R2C, 0);
}
cufftResult host_cufftExecC2R(cufftHandle plan, cufftComplex* idata, cufftReal* odata) {
  return execute(plan, idata, odata, CUFFT_C2R, 0);
}
cufftResult host_cufftExecZ2Z(cufftHandle plan, cufftDoubleComplex* idata, cufftDoubleComplex* odata, int direction) {
  return execute(plan, idata, odata, CUFFT_Z2Z, direction);
}
cufftResult host_cufftExecD2Z(cufftHandle plan, cufftDoubleReal* idata, cufftDoubleComplex* odata) {
  return execute(plan, idata, odata, CUFFT_D2Z, 0);
}
cufftResult host_cufftExecZ2D(cufftHandle plan, cufftDoubleComplex* idata, cufftDoubleReal* odata) {
  return execute(plan, idata, odata, CUFFT_Z2D, 0);
}
cufftResult host_cufftSetStream(cufftHandle plan, cudaStream_t stream) {
  FftPlan* found = registry().find(plan);
  if (found == nullptr) return CUFFT_INVALID_PLAN;
  found->stream = stream;
  return CUFFT_SUCCESS;
}
cufftResult host_cufftDestroy(cufftHandle plan) {
  return registry().destroy(plan) ? CUFFT_SUCCESS : CUFFT_INVALID_PLAN;
}
cufftResult host_cufftGetVersion(int* version) {
  if (version == nullptr) return CUFFT_INVALID_VALUE;
  *version = kCufftApiVersion;
  return CUFFT_SUCCESS;
}

}  // namespace dispar::hostlib
