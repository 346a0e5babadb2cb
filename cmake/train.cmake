# train/: optimizers, schedules, trainer, checkpoints, metrics, decoding, data parallelism.
attn_add_library(attn_train train DEPS attn_nn attn_data)
list(APPEND ATTN_TEST_LIBS attn_train)

# MPI is optional (docs/distributed.md). Found: train/distributed/mpi_communicator.cpp is built
# and `mpirun -np N attnlab train ...` trains data-parallel. Not found (or
# -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON): that file is left out, and only the single-process
# communicator exists. mpi.h is seen by train/distributed/ alone (PRIVATE).
set(MPI_CXX_SKIP_MPICXX ON)  # the C API only; OpenMPI's C++ bindings are deprecated
find_package(MPI COMPONENTS CXX)
if(MPI_CXX_FOUND)
  target_link_libraries(attn_train PRIVATE MPI::MPI_CXX)
  target_compile_definitions(attn_train PRIVATE ATTN_HAVE_MPI OMPI_SKIP_MPICXX)
  message(STATUS "attnlab: MPI ${MPI_CXX_VERSION} found: data-parallel training on")
else()
  get_target_property(attn_train_srcs attn_train SOURCES)
  list(FILTER attn_train_srcs EXCLUDE REGEX "train/distributed/mpi_communicator\\.cpp$")
  set_target_properties(attn_train PROPERTIES SOURCES "${attn_train_srcs}")
  message(STATUS "attnlab: MPI not found: single-process training only")
endif()
