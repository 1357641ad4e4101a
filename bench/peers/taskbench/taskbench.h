/* Task Bench's dependence patterns, compute kernel and result, shared by the three versions of
 * bench/peers (DISPAR, StarPU-MPI, hand-written MPI) so that they run the same graph and agree on one
 * checksum. C and C++. After Task Bench (Slaughter et al., SC'20, github.com/StanfordLegion/task-bench,
 * Apache-2.0): the patterns' definitions and the compute_bound kernel's idea; the code is ours.
 *
 * A graph is W columns by T time steps. Task (i, t) reads the outputs of its dependences, the tasks
 * (j, t-1) for j in deps(i, t), spins the kernel for G iterations and produces one 64-bit value. The
 * checksum is the sum (mod 2^64) of every task's value, so any misrouted or lost message changes it. */
#ifndef DISPAR_BENCH_TASKBENCH_H
#define DISPAR_BENCH_TASKBENCH_H

#include <stdint.h>
#include <string.h>
#include <time.h>

enum tb_pattern {
  TB_TRIVIAL,    /* no dependences */
  TB_STENCIL_1D, /* i-1, i, i+1 (within the width) */
  TB_FFT,        /* i and its butterfly partner i ^ 2^((t-1) mod log2 W) */
  TB_NEAREST,    /* the 5 nearest: i-2 .. i+2 (within the width) */
  TB_ALL_TO_ALL, /* every column */
  TB_TREE,       /* i / 2: a binary tree fanning out, width min(W, 2^t) at step t */
  TB_PATTERNS
};

static const char* const tb_pattern_names[TB_PATTERNS] = {"trivial", "stencil_1d", "fft",
                                                          "nearest", "all_to_all", "tree"};

static inline int tb_pattern_named(const char* name) {
  for (int p = 0; p < TB_PATTERNS; ++p)
    if (strcmp(name, tb_pattern_names[p]) == 0) return p;
  return -1;
}

static inline int tb_log2(int width) {
  int bits = 0;
  while ((1 << (bits + 1)) <= width) ++bits;
  return bits;
}

/* The columns with a task at step t: all of them but in the tree, which doubles from one column at step 0
 * until it is W wide. Columns at or past it have no task, no value and no messages at that step. */
static inline int tb_width_at(int pattern, int width, long t) {
  if (pattern != TB_TREE || t >= 30 || (1L << t) >= width) return width;
  return (int)(1L << t);
}

static inline int tb_active(int pattern, int width, int i, long t) { return i < tb_width_at(pattern, width, t); }

/* The tasks of a graph of `steps` steps: what its useful compute is counted in. */
static inline long tb_tasks(int pattern, int width, long steps) {
  long tasks = 0;
  for (long t = 0; t < steps; ++t) tasks += tb_width_at(pattern, width, t);
  return tasks;
}

/* Whether task (i, t) reads task (j, t-1)'s output. Every pattern but the tree is symmetric in i and j. */
static inline int tb_depends(int pattern, int width, int j, int i, long t) {
  if (t < 1) return 0;
  switch (pattern) {
    case TB_TRIVIAL: return 0;
    case TB_STENCIL_1D: return j >= i - 1 && j <= i + 1;
    case TB_NEAREST: return j >= i - 2 && j <= i + 2;
    case TB_FFT: {
      const int levels = tb_log2(width);
      return j == i || (levels > 0 && j == (i ^ (1 << ((t - 1) % levels))));
    }
    case TB_ALL_TO_ALL: return 1;
    case TB_TREE: return tb_active(pattern, width, i, t) && j == i / 2;
  }
  return 0;
}

/* Whether j is ever a dependence of i (at some step): the pipes a dataflow version needs. */
static inline int tb_ever_depends(int pattern, int width, int j, int i) {
  const int levels = tb_log2(width);
  for (long t = 1; t <= 1 + (levels > 0 ? levels : 1); ++t)
    if (tb_depends(pattern, width, j, i, t)) return 1;
  return 0;
}

/* The dataflow versions' pipes. Every column has the same number of input slots, tb_slots(), and as many
 * output slots (a family's members declare the same ports): slot k of column i is a pipe from
 * tb_slot_source(i, k), and output slot k of column s goes to tb_slot_target(s, k). The slots are the
 * pattern's offsets taken round the width (stencil_1d: -1, +1; nearest: -2 .. +2; all_to_all: 1 .. W-1;
 * fft: the butterfly partners i ^ 2^k), so a slot that wraps round an edge of a non-periodic pattern
 * exists but never carries a message (tb_slot_live). The tree has two slots, from the parent of the
 * even columns and of the odd ones: output slot 0 of s goes to 2s, slot 1 to 2s + 1 (tb_tree_edge). */
/* The offsets of the patterns that have them, less those that come round to the column itself. */
static inline int tb_raw_offsets(int pattern, int width) {
  switch (pattern) {
    case TB_STENCIL_1D: return 2;
    case TB_NEAREST: return 4;
    case TB_ALL_TO_ALL: return width - 1;
  }
  return 0;
}

static inline int tb_raw_offset(int pattern, int raw) {
  switch (pattern) {
    case TB_STENCIL_1D: return raw == 0 ? -1 : 1;
    case TB_NEAREST: return raw < 2 ? raw - 2 : raw - 1;
    case TB_ALL_TO_ALL: return raw + 1;
  }
  return 0;
}

static inline int tb_slots(int pattern, int width) {
  if (pattern == TB_FFT) return tb_log2(width);
  if (pattern == TB_TREE) return width > 1 ? 2 : 0;
  int slots = 0;
  for (int raw = 0; raw < tb_raw_offsets(pattern, width); ++raw) slots += tb_raw_offset(pattern, raw) % width != 0;
  return slots;
}

static inline int tb_slot_offset(int pattern, int width, int slot) {
  for (int raw = 0; raw < tb_raw_offsets(pattern, width); ++raw)
    if (tb_raw_offset(pattern, raw) % width != 0 && slot-- == 0) return tb_raw_offset(pattern, raw);
  return 0;
}

/* The tree's slot k carries the edge from parent s to child 2s + k while that child is a column and not s
 * itself (column 0 is its own parent). Its other slots carry nothing: tb_slot_target and tb_slot_source
 * give -1 for them, and taskbench_graph pairs them so that a family's ports are each pipe once. */
static inline int tb_tree_edge(int width, int s, int k) { return 2 * s + k < width && 2 * s + k != s; }

/* Whether column i's slot k receives a live edge (from its parent i / 2). */
static inline int tb_tree_child(int i, int k) { return i % 2 == k && i != 0; }

static inline int tb_slot_source(int pattern, int width, int i, int slot) {
  if (pattern == TB_FFT) return i ^ (1 << slot);
  if (pattern == TB_TREE) return tb_tree_child(i, slot) ? i / 2 : -1;
  return ((i + tb_slot_offset(pattern, width, slot)) % width + width) % width;
}

static inline int tb_slot_target(int pattern, int width, int s, int slot) {
  if (pattern == TB_FFT) return s ^ (1 << slot);
  if (pattern == TB_TREE) return tb_tree_edge(width, s, slot) ? 2 * s + slot : -1;
  return ((s - tb_slot_offset(pattern, width, slot)) % width + width) % width;
}

/* Whether slot k of column i carries messages: its source is a dependence of i without wrapping round. */
static inline int tb_slot_live(int pattern, int width, int i, int slot) {
  if (pattern == TB_FFT) return (i ^ (1 << slot)) < width;
  if (pattern == TB_ALL_TO_ALL) return 1;
  if (pattern == TB_TREE) return tb_tree_child(i, slot);
  const int source = i + tb_slot_offset(pattern, width, slot);
  return source >= 0 && source < width;
}

/* splitmix64's finaliser (public domain, Sebastiano Vigna). */
static inline uint64_t tb_mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/* One input's contribution to task (i, t): order-free, so readers may take their inputs in any order. */
static inline uint64_t tb_input_term(int j, uint64_t value) { return tb_mix(value + (uint64_t)j); }

/* Task (i, t)'s value from the sum of its inputs' terms. */
static inline uint64_t tb_output(int i, long t, uint64_t inputs) {
  return tb_mix(inputs ^ ((uint64_t)t << 32) ^ (uint64_t)i);
}

/* Task Bench's compute_bound kernel in spirit: a serial chain of multiply-adds, G of them, which no
 * compiler vectorises or folds without -ffast-math, so one iteration costs the same in every version. */
static inline double tb_kernel(long iterations, double seed) {
  double x = seed;
  for (long g = 0; g < iterations; ++g) x = x * 0.9999999 + 1e-7;
  return x;
}

/* Keeps the kernel's result alive: the compiler must compute what an empty asm statement reads. */
static inline void tb_consume(double value) { __asm__ __volatile__("" : : "g"(value) : "memory"); }

static inline double tb_now(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now); /* one clock for every process of one machine */
  return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

/* The line every version prints, which bench/peers/run.sh reads. */
#define TB_RESULT_FORMAT "taskbench %s system=%s width=%d steps=%ld tasks=%ld iterations=%ld checksum=%llu wall=%.6f\n"

#endif
