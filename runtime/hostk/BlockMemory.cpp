#include "BlockMemory.h"

#include "Diagnostics.h"

#include <algorithm>
#include <cstdint>
#include <new>

namespace dispar::hostk::detail {

namespace {
constexpr std::size_t kArenaAlignment = 64;
}

void BlockSharedMemory::AlignedFree::operator()(unsigned char* bytes) const {
  ::operator delete[](bytes, std::align_val_t{kArenaAlignment});
}

BlockSharedMemory::AlignedBytes BlockSharedMemory::allocateAligned(std::size_t bytes) {
  return AlignedBytes(static_cast<unsigned char*>(::operator new[](bytes, std::align_val_t{kArenaAlignment})));
}

BlockSharedMemory::BlockSharedMemory()
    : staticArena_(allocateAligned(LaunchLimits::kMaxStaticSharedBytes)),
      dynamicArena_(allocateAligned(kArenaAlignment)), dynamicCapacity_(kArenaAlignment) {}

void BlockSharedMemory::startBlock(std::size_t dynamicBytes) {
  ++blockSerial_;
  declarations_ = 0;
  used_ = 0;
  if (dynamicBytes > dynamicCapacity_) {
    dynamicArena_ = allocateAligned(dynamicBytes);
    dynamicCapacity_ = dynamicBytes;
  }
}

void* BlockSharedMemory::slot(unsigned key, std::size_t size, std::size_t alignment, const uint3& blockIdx) {
  if (key >= slots_.size()) slots_.resize(key + 1);
  Slot& slot = slots_[key];
  if (slot.block == blockSerial_) return staticArena_.get() + slot.offset;
  // The first thread of the block to reach this declaration places it.
  const std::size_t align = alignment < 1 ? 1 : alignment;
  const auto base = reinterpret_cast<std::uintptr_t>(staticArena_.get());
  const std::size_t offset = ((base + used_ + align - 1) / align * align) - base;
  ++declarations_;
  if (offset + size > LaunchLimits::kMaxStaticSharedBytes)
    fatal("__shared__ declarations of the kernel need more than %zu bytes (block (%u,%u,%u), declaration "
          "#%u of %zu bytes)",
          LaunchLimits::kMaxStaticSharedBytes, blockIdx.x, blockIdx.y, blockIdx.z, declarations_, size);
  slot = Slot{blockSerial_, offset, size};
  used_ = offset + size;
  return staticArena_.get() + offset;
}

void* BlockScratch::allocate(std::size_t count, std::size_t size, std::size_t alignment) {
  // Slots handed out earlier in the block must stay put, so storage grows by whole chunks, kept for
  // later blocks.
  const std::size_t align = alignment < 1 ? 1 : alignment;
  const std::size_t bytes = count * size;
  for (;; ++chunk_, used_ = 0) {
    if (chunk_ == chunks_.size()) chunks_.emplace_back(std::max<std::size_t>(bytes + align, 64 * 1024));
    std::vector<unsigned char>& chunk = chunks_[chunk_];
    const auto base = reinterpret_cast<std::uintptr_t>(chunk.data());
    const std::uintptr_t aligned = (base + used_ + align - 1) / align * align;
    if (aligned + bytes <= base + chunk.size()) {
      used_ = aligned - base + bytes;
      return reinterpret_cast<void*>(aligned);
    }
  }
}

}  // namespace dispar::hostk::detail
