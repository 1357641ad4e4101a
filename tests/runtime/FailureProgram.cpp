// A generated-style program whose VNODEs misbehave as argv[1] says; run by expect_failure.sh to check
// that the job stops with one clear message and a non-zero status instead of hanging.
//   ok                 runs normally (launched with the wrong rank count by the rank-count test)
//   throw              square replica 1 throws
//   scalar-long        square writes 2-element messages, sink reads scalars
//   scalar-empty       square writes empty messages, sink reads scalars
//   write-after-close  source closes its port, then writes
//   push-after-write   source writes messages, then pushes an item on the same port
//   push-after-close   source pushes its samples as items, closes the port, pushes again
//   read-after-pop     sink pops an item, then reads a message on the same port
//   pop-past-end       sink pops one item more than the stream holds
//   peek-past-end      sink peeks beyond the end of the stream
// argv[2] may add a layout: "grouped" runs all five instances in one rank (rank groups, in-memory
// pipes); "grouped-single-thread" does so after initialising MPI itself without thread support.
#include <dispar/runtime.h>

#include <mpi.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

std::string mode() { return dispar::args().empty() ? "ok" : dispar::args()[0]; }

void dispar_vnode_source(dispar::OutPort<float>& samples) {
  if (mode() == "push-after-close") {
    samples.push(1.0f);  // one item: square reads it as a one-element message
    samples.close();
    samples.push(2.0f);  // room is left in the batch: still an error
    return;
  }
  for (int i = 0; i < 12; ++i) samples.write(static_cast<float>(i));
  if (mode() == "write-after-close") {
    samples.close();
    samples.write(1.0f);
  }
  if (mode() == "push-after-write") samples.push(1.0f);
}

void dispar_vnode_square(dispar::InPort<float>& samples, dispar::OutPort<double>& energies) {
  float x = 0;
  while (samples.read(x)) {
    if (mode() == "throw" && dispar::replica() == 1) throw std::runtime_error("negative sample at index 7");
    if (mode() == "exit-early" && dispar::replica() == 1) std::exit(0);
    if (mode() == "scalar-long")
      energies.write(std::vector<double>{x, x});
    else if (mode() == "scalar-empty")
      energies.write(std::vector<double>{});
    else
      energies.write(static_cast<double>(x) * x);
  }
}

void dispar_vnode_sink(dispar::InPort<double>& energies) {
  if (mode() == "read-after-pop" || mode() == "pop-past-end" || mode() == "peek-past-end") {
    double total = energies.pop();
    if (mode() == "peek-past-end") {
      total += energies.peek(5);   // waits for the items up to it
      total += energies.peek(20);  // 11 are left
    }
    if (mode() == "read-after-pop") {
      double energy = 0;
      energies.read(energy);
    }
    for (int i = 1; i < 13; ++i) total += energies.pop();  // 12 items in all: the 13th is past the end
    return;
  }
  double energy = 0;
  double total = 0;
  while (energies.read(energy)) total += energy;
  if (total != 506.0 && mode() != "push-after-close")
    throw std::runtime_error("total " + std::to_string(total) + " != 506");
}

}  // namespace

static const dispar::rt::VnodeSpec kVnodes[] = {{"source", 0, 1, "app.dsp:10:1", false},
                                                {"square", 1, 3, "app.dsp:19:1", false},
                                                {"sink", 4, 1, "app.dsp:28:1", false}};
static const dispar::rt::PipeSpec kPipes[] = {
    {"samples", "float", sizeof(float), 0, 1, dispar::rt::MergeOrder::RoundRobin, 0, dispar::rt::SplitMode::RoundRobin},
    {"energies", "double", sizeof(double), 1, 2, dispar::rt::MergeOrder::RoundRobin, 0,
     dispar::rt::SplitMode::RoundRobin}};
static const dispar::rt::ProgramSpec kProgram = {"app", kVnodes, 3, kPipes, 2, 5};
static void dispatch(dispar::rt::Instance& instance) {
  switch (instance.vnode()) {
    case 0: {
      auto samples = instance.out<float>(0);
      dispar_vnode_source(samples);
      break;
    }
    case 1: {
      auto samples = instance.in<float>(0);
      auto energies = instance.out<double>(1);
      dispar_vnode_square(samples, energies);
      break;
    }
    case 2: {
      auto energies = instance.in<double>(1);
      dispar_vnode_sink(energies);
      break;
    }
  }
}
int main(int argc, char** argv) {
  const std::string layout = argc > 2 ? argv[2] : "";
  dispar::rt::RunOptions options;
  if (layout == "grouped" || layout == "grouped-single-thread") options.grouping = {{0, 1, 2, 3, 4}};
  if (layout != "grouped-single-thread") return dispar::rt::run(argc, argv, kProgram, dispatch, options);
  MPI_Init(&argc, &argv);
  const int status = dispar::rt::run(argc, argv, kProgram, dispatch, options);
  MPI_Finalize();
  return status;
}
