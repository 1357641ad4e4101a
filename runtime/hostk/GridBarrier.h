// The grid-wide barrier of a cooperative launch (cudaLaunchCooperativeKernel): grid_group::sync() opens
// once every block of the grid has arrived. Every block of such a launch runs at once, each on its own
// OS thread (HostDevice::runCooperative), so a block that waits here blocks only its own thread.
#ifndef DISPAR_HOSTK_GRIDBARRIER_H
#define DISPAR_HOSTK_GRIDBARRIER_H

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace dispar::hostk::detail {

class GridBarrier {
 public:
  explicit GridBarrier(std::uint64_t blocks) : remaining_(blocks) {}

  /// The calling block has reached grid.sync() (every live thread of it): waits until every block that
  /// has not ended has too.
  void arriveAndWait();
  /// The calling block has ended (returned or failed): later barriers no longer wait for it, so a block
  /// that fails cannot leave the others waiting forever.
  void leave();

 private:
  void openIfComplete();

  std::mutex mutex_;
  std::condition_variable opened_;
  std::uint64_t remaining_;  ///< blocks that have not ended
  std::uint64_t arrived_ = 0;
  std::uint64_t generation_ = 0;
};

}  // namespace dispar::hostk::detail

#endif  // DISPAR_HOSTK_GRIDBARRIER_H
