#include "GridBarrier.h"

namespace dispar::hostk::detail {

void GridBarrier::openIfComplete() {
  if (arrived_ < remaining_ || arrived_ == 0) return;
  arrived_ = 0;
  ++generation_;
  opened_.notify_all();
}

void GridBarrier::arriveAndWait() {
  std::unique_lock<std::mutex> lock(mutex_);
  const std::uint64_t generation = generation_;
  ++arrived_;
  openIfComplete();
  opened_.wait(lock, [&] { return generation_ != generation; });
}

void GridBarrier::leave() {
  const std::lock_guard<std::mutex> lock(mutex_);
  --remaining_;
  openIfComplete();
}

}  // namespace dispar::hostk::detail
