// A two-VNODE program built as nvcc builds link it (CudaBackend, compiled for sm_80): `source` (CO)
// sends a vector to `scale` (CG), which reads it into a device_vector, doubles it on whichever side
// it runs, and checks it. The tests run it under different mappings and settings.
#include <dispar/device_vector.h>
#include <dispar/gpu/CudaBackend.h>
#include <dispar/runtime.h>

#include <cstdio>
#include <stdexcept>
#include <vector>

namespace {

namespace rt = dispar::rt;

constexpr rt::VnodeSpec kVnodes[] = {{"source", 0, 1, "scale.dsp:3:1", false}, {"scale", 1, 1, "scale.dsp:9:1", true}};
constexpr rt::PipeSpec kPipes[] = {
    {"values", "float", sizeof(float), 0, 1, rt::MergeOrder::RoundRobin, 0, rt::SplitMode::RoundRobin}};
constexpr rt::ProgramSpec kProgram = {"scale", kVnodes, 2, kPipes, 1, 2};
const char* const kArchs[] = {"sm_80"};

void dispatch(rt::Instance& instance) {
  if (instance.vnode() == 0) {
    instance.out<float>(0).write(std::vector<float>(100000, 1.5f));
    return;
  }
  auto in = instance.in<float>(0);
  dispar::device_vector<float> values;
  if (!in.read(values)) throw std::runtime_error("no message");
  std::vector<float> host = values.to_host();
  for (float& v : host) v *= 2;
  values = host;
  for (float v : values.to_host())
    if (v != 3.0f) throw std::runtime_error("wrong value after the round trip");
}

}  // namespace

int main(int argc, char** argv) {
  const dispar::gpu::CudaBackend devices(kArchs);
  return rt::run(argc, argv, kProgram, dispatch, &devices);
}
