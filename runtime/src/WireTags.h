// Every MPI tag a pipe's communicator carries, in one table (docs/runtime.md, "Message protocol";
// docs/gpu-runtime.md, "Wire format"). Each pipe has its own communicator, so tags only need to be
// distinct from one another.
#ifndef DISPAR_RUNTIME_WIRETAGS_H
#define DISPAR_RUNTIME_WIRETAGS_H

namespace dispar::rt {

inline constexpr int kDataTag = 0;        // one plain message: exactly its bytes
inline constexpr int kEndTag = 1;         // empty: end of stream on this link
inline constexpr int kCreditTag = 2;      // empty, reader to writer: creditBatch() messages consumed
inline constexpr int kChunkedTag = 3;     // a ChunkHeader: a chunked message follows (ChunkedTransfer.h)
inline constexpr int kChunkTag = 4;       // one chunk of it
inline constexpr int kSizeChangeTag = 5;  // empty: the next message is not plain data of the last size
inline constexpr int kSequenceTag = 6;    // a std::uint64_t: the next message's sequence number (sequenced pipes)
inline constexpr int kReaderGoneTag = 7;  // empty, reader to writer under split(demand): its VNODE returned

}  // namespace dispar::rt

#endif  // DISPAR_RUNTIME_WIRETAGS_H
