// Why srad and histogram256 trail their loops on the host path (bench/host_kernels/README.md): the order
// in which the host runs a grid's blocks, one whole block after another, walks memory in the GPU's order,
// not a loop's. This measures that order alone, in plain C++ (no DISPAR), against the loop's, in the same
// run:
//   - srad's stores: five 1024^2 outputs written from one input, row by row (the serial loop's order),
//     16 x 16 tile by tile (a block of thread loops after another), and with runs of consecutive blocks
//     sharing each row sweep (what running a run of blocks' segments together would give);
//   - histogram256's grid-stride loop over 16 MiB: in order, block by block (each block's 256 threads
//     step through the whole input, 240 blocks apart), and with the blocks' iterations interleaved.
//
//   host_kernels_access_order        prints each order's best of 9 and its ratio to the loop's order
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace {

template <class Body>
double bestMs(Body&& body) {
  double best = 1e30;
  for (int run = 0; run < 9; ++run) {
    const auto start = std::chrono::steady_clock::now();
    body();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

constexpr int kSide = 1024, kTile = 16;

struct Stores {
  std::vector<float> in = std::vector<float>(kSide * kSide, 1.0f);
  std::vector<float> out[5];
  Stores() {
    for (auto& o : out) o.assign(kSide * kSide, 0.0f);
  }
  void at(int i) {
    const float j = in[i];
    for (int k = 0; k < 5; ++k) out[k][i] = j * float(k + 1);
  }
  // Tile rows: every block of a run of `run` consecutive blocks along x writes its row ty, then the next.
  void tiles(int run) {
    for (int by = 0; by < kSide / kTile; ++by)
      for (int first = 0; first < kSide / kTile; first += run)
        for (int ty = 0; ty < kTile; ++ty)
          for (int bx = first; bx < first + run; ++bx)
            for (int tx = 0; tx < kTile; ++tx) at((by * kTile + ty) * kSide + bx * kTile + tx);
  }
};

constexpr int kBytes = 16 << 20, kBlocks = 240, kThreads = 256;

struct Histogram {
  std::vector<unsigned char> data = std::vector<unsigned char>(kBytes);
  std::vector<unsigned> perBlock = std::vector<unsigned>(kBlocks * 256);
  unsigned bins[256] = {};
  Histogram() {
    unsigned s = 1;
    for (auto& d : data) d = static_cast<unsigned char>((s = s * 1103515245u + 12345u) >> 24);
  }
  // Iteration `it` of block `b`'s grid-stride loop: its 256 threads' consecutive bytes.
  bool step(int b, long long it) {
    const long long base = (long long)b * kThreads + it * kThreads * kBlocks;
    if (base >= kBytes) return false;
    unsigned* h = &perBlock[b * 256];
    for (int x = 0; x < kThreads && base + x < kBytes; ++x) ++h[data[base + x]];
    return true;
  }
  void reset() {
    std::fill(perBlock.begin(), perBlock.end(), 0u);
    std::fill(bins, bins + 256, 0u);
  }
  void merge() {
    for (int b = 0; b < kBlocks; ++b)
      for (int i = 0; i < 256; ++i) bins[i] += perBlock[b * 256 + i];
  }
};

}  // namespace

int main() {
  Stores s;
  const double rows = bestMs([&] {
    for (int i = 0; i < kSide * kSide; ++i) s.at(i);
  });
  std::printf("srad's stores, 5 outputs of %d^2 floats (best of 9, ms)\n", kSide);
  std::printf("  %-52s %8.2f  1.00x\n", "row by row (the loop)", rows);
  for (int run : {1, 4, 16, kSide / kTile}) {
    const double ms = bestMs([&] { s.tiles(run); });
    char what[96];
    if (run == 1)
      std::snprintf(what, sizeof what, "tile by tile (a block after another)");
    else
      std::snprintf(what, sizeof what, "runs of %d blocks sharing each row sweep", run);
    std::printf("  %-52s %8.2f  %.2fx\n", what, ms, ms / rows);
  }

  Histogram h;
  const double linear = bestMs([&] {
    std::fill(h.bins, h.bins + 256, 0u);
    for (int i = 0; i < kBytes; ++i) ++h.bins[h.data[i]];
  });
  const unsigned expected = h.bins[7];
  const double blockByBlock = bestMs([&] {
    h.reset();
    for (int b = 0; b < kBlocks; ++b)
      for (long long it = 0; h.step(b, it); ++it) {
      }
    h.merge();
  });
  const bool sameBlockByBlock = h.bins[7] == expected;
  const double interleaved = bestMs([&] {
    h.reset();
    for (long long it = 0;; ++it) {
      bool any = false;
      for (int b = 0; b < kBlocks; ++b) any = h.step(b, it) || any;
      if (!any) break;
    }
    h.merge();
  });
  std::printf("histogram256's grid-stride loop, 16 MiB, %d blocks of %d (best of 9, ms)\n", kBlocks, kThreads);
  std::printf("  %-52s %8.2f  1.00x\n", "in order (the loop)", linear);
  std::printf("  %-52s %8.2f  %.2fx\n", "block by block", blockByBlock, blockByBlock / linear);
  std::printf("  %-52s %8.2f  %.2fx\n", "the blocks' iterations interleaved", interleaved, interleaved / linear);
  if (!sameBlockByBlock || h.bins[7] != expected) {
    std::fprintf(stderr, "host_kernels_access_order: the histograms differ\n");
    return 1;
  }
  return 0;
}
