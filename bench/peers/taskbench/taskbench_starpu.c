/* Task Bench's patterns in StarPU with StarPU-MPI, written as StarPU's documentation teaches: a codelet,
 * one data handle per column and time-step parity, a task per (column, step) submitted on every rank
 * with starpu_mpi_task_insert, which runs it on the rank owning the data it writes and moves the data it
 * reads. Columns are dealt to ranks round robin. The codelet has a history-based performance model
 * (footprint: the kernel's iterations) for schedulers that use one (STARPU_SCHED=dmda, calibrated first
 * with STARPU_CALIBRATE=1).
 * Usage: mpiexec -n R ./taskbench_starpu PATTERN WIDTH STEPS ITERATIONS */
#include <mpi.h>
#include <starpu.h>
#include <starpu_mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "taskbench.h"

struct tb_task_args {
  int pattern, width, column;
  long step, iterations;
};

static uint64_t checksum; /* this rank's tasks' values, summed by the workers */

static void tb_cpu_task(void* buffers[], void* cl_arg) {
  struct tb_task_args args;
  starpu_codelet_unpack_args(cl_arg, &args);
  /* The buffers are the dependences in ascending column order, then the output. */
  uint64_t inputs = 0;
  int buffer = 0;
  for (int j = 0; j < args.width; ++j)
    if (tb_depends(args.pattern, args.width, j, args.column, args.step))
      inputs += tb_input_term(j, *(uint64_t*)STARPU_VARIABLE_GET_PTR(buffers[buffer++]));
  tb_consume(tb_kernel(args.iterations, (double)args.step));
  const uint64_t value = tb_output(args.column, args.step, inputs);
  *(uint64_t*)STARPU_VARIABLE_GET_PTR(buffers[buffer]) = value;
  __atomic_fetch_add(&checksum, value, __ATOMIC_RELAXED);
}

static uint32_t tb_footprint(struct starpu_task* task) {
  struct tb_task_args args;
  starpu_codelet_unpack_args(task->cl_arg, &args);
  return starpu_hash_crc32c_be((uint32_t)args.iterations, 0);
}

static struct starpu_perfmodel tb_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "dispar_bench_taskbench",
    .footprint = tb_footprint,
};

static struct starpu_codelet tb_codelet = {
    .cpu_funcs = {tb_cpu_task},
    .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &tb_model,
    .name = "taskbench",
};

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const int pattern = argc == 5 ? tb_pattern_named(argv[1]) : -1;
  if (pattern < 0) {
    if (rank == 0) fprintf(stderr, "usage: taskbench_starpu PATTERN WIDTH STEPS ITERATIONS\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int width = atoi(argv[2]);
  const long steps = atol(argv[3]), iterations = atol(argv[4]);
  if (starpu_mpi_init_conf(&argc, &argv, 0, MPI_COMM_WORLD, NULL) != 0) {
    fprintf(stderr, "taskbench_starpu: starpu_mpi_init_conf failed\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  /* values[parity][column]: the value of (column, step) lives in values[step % 2][column]. */
  uint64_t* values = calloc(2 * (size_t)width, sizeof(uint64_t));
  starpu_data_handle_t* handles = malloc(2 * (size_t)width * sizeof(starpu_data_handle_t));
  for (int parity = 0; parity < 2; ++parity)
    for (int column = 0; column < width; ++column) {
      const int index = parity * width + column, owner = column % ranks;
      if (owner == rank)
        starpu_variable_data_register(&handles[index], STARPU_MAIN_RAM, (uintptr_t)&values[index],
                                      sizeof(uint64_t));
      else
        starpu_variable_data_register(&handles[index], -1, (uintptr_t)NULL, sizeof(uint64_t));
      starpu_mpi_data_register(handles[index], index, owner);
    }
  struct starpu_data_descr* descriptors = malloc(((size_t)width + 1) * sizeof(struct starpu_data_descr));

  starpu_mpi_barrier(MPI_COMM_WORLD);
  const double start = tb_now(); /* submission is part of the run: StarPU starts tasks as they come */
  for (long step = 0; step < steps; ++step)
    for (int column = 0; column < width; ++column) {
      if (!tb_active(pattern, width, column, step)) continue;
      int count = 0;
      for (int j = 0; j < width; ++j)
        if (tb_depends(pattern, width, j, column, step)) {
          descriptors[count].handle = handles[((step - 1) % 2) * width + j];
          descriptors[count++].mode = STARPU_R;
        }
      descriptors[count].handle = handles[(step % 2) * width + column];
      descriptors[count++].mode = STARPU_W;
      struct tb_task_args args = {pattern, width, column, step, iterations};
      const int status = starpu_mpi_task_insert(MPI_COMM_WORLD, &tb_codelet, STARPU_DATA_MODE_ARRAY, descriptors,
                                                count, STARPU_VALUE, &args, sizeof(args), 0);
      if (status != 0) {
        fprintf(stderr, "taskbench_starpu: starpu_mpi_task_insert failed: %d\n", status);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
  starpu_task_wait_for_all();
  starpu_mpi_wait_for_all(MPI_COMM_WORLD);
  starpu_mpi_barrier(MPI_COMM_WORLD);
  const double end = tb_now();

  for (int index = 0; index < 2 * width; ++index) starpu_data_unregister(handles[index]);
  starpu_mpi_shutdown();
  /* From the first rank's start to the last one's end, as the other versions measure it. */
  double first = 0, last = 0;
  MPI_Reduce(&start, &first, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
  MPI_Reduce(&end, &last, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  unsigned long long total = 0, mine = checksum;
  MPI_Reduce(&mine, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf(TB_RESULT_FORMAT, tb_pattern_names[pattern], "starpu", width, steps, tb_tasks(pattern, width, steps),
           iterations, total, last - first);
  free(descriptors);
  free(handles);
  free(values);
  MPI_Finalize();
  return 0;
}
