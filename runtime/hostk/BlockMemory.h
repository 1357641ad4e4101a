// The memory a block of host-path CUDA threads shares, apart from how its threads are scheduled
// (BlockRunner): its __shared__ memory, and the per-thread storage of thread-loop clones. Both are
// reused from block to block: a runner allocates once and keeps what it grew to.
#ifndef DISPAR_HOSTK_BLOCKMEMORY_H
#define DISPAR_HOSTK_BLOCKMEMORY_H

#include <dispar/hostk/Launch.h>

#include <cstddef>
#include <memory>
#include <vector>

namespace dispar::hostk::detail {

/// The __shared__ memory of the block being run. Static declarations are placed in one arena in the
/// order the block's threads first reach them (every thread of the block then gets the same address);
/// the launch's dynamic shared memory (`extern __shared__`) is a second arena.
class BlockSharedMemory {
 public:
  BlockSharedMemory();

  /// A new block: every declaration is placed afresh; the dynamic arena holds at least `dynamicBytes`.
  void startBlock(std::size_t dynamicBytes);
  /// Declaration `key` in this block, placed on its first call. Ends the program, naming `blockIdx`,
  /// when the declarations need more than the device's static shared memory.
  void* slot(unsigned key, std::size_t size, std::size_t alignment, const uint3& blockIdx);
  void* dynamic() const { return dynamicArena_.get(); }

 private:
  struct AlignedFree {
    void operator()(unsigned char* bytes) const;
  };
  using AlignedBytes = std::unique_ptr<unsigned char[], AlignedFree>;
  static AlignedBytes allocateAligned(std::size_t bytes);
  /// Where the running block keeps one declaration (valid when `block` is the current one).
  struct Slot {
    unsigned long long block = 0;
    std::size_t offset = 0;
    std::size_t size = 0;
  };

  std::vector<Slot> slots_;
  unsigned long long blockSerial_ = 0;  ///< numbers the blocks; tells stale slots apart
  unsigned declarations_ = 0;           ///< declarations placed in the running block
  std::size_t used_ = 0;
  AlignedBytes staticArena_;
  AlignedBytes dynamicArena_;
  std::size_t dynamicCapacity_ = 0;
};

/// Per-thread storage of a thread-loop clone's block (Kernel.h's PerThread): slots that stay put for
/// the whole block, carved from chunks that are kept for later blocks.
class BlockScratch {
 public:
  void startBlock() {
    chunk_ = 0;
    used_ = 0;
  }
  void* allocate(std::size_t count, std::size_t size, std::size_t alignment);

 private:
  std::vector<std::vector<unsigned char>> chunks_;
  std::size_t chunk_ = 0;  ///< the one being filled
  std::size_t used_ = 0;   ///< bytes used of it
};

}  // namespace dispar::hostk::detail

#endif  // DISPAR_HOSTK_BLOCKMEMORY_H
