# train/: optimizers, schedules, trainer, checkpoints, metrics, decoding, data parallelism.
attn_add_library(attn_train train DEPS attn_nn attn_data)
list(APPEND ATTN_TEST_LIBS attn_train)

# MPI is optional (docs/distributed.md). train/distributed/mpi_communicator.cpp, the one file
# that includes mpi.h, is built into its own library, attn_mpi, only when MPI is found; no other
# file sees MPI's headers. Not found (or -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON): only the
# single-process communicator exists, and `attnlab train` under mpirun says so.
get_target_property(attn_train_srcs attn_train SOURCES)
list(FILTER attn_train_srcs EXCLUDE REGEX "train/distributed/mpi_communicator\\.cpp$")
set_target_properties(attn_train PROPERTIES SOURCES "${attn_train_srcs}")
set(MPI_CXX_SKIP_MPICXX ON)  # the C API only; OpenMPI's C++ bindings are deprecated
find_package(MPI COMPONENTS CXX)
if(MPI_CXX_FOUND)
  add_library(attn_mpi STATIC ${CMAKE_SOURCE_DIR}/train/distributed/mpi_communicator.cpp)
  target_include_directories(attn_mpi PRIVATE ${CMAKE_SOURCE_DIR})
  target_compile_definitions(attn_mpi PRIVATE OMPI_SKIP_MPICXX)
  target_link_libraries(attn_mpi PRIVATE MPI::MPI_CXX fmt::fmt)
  target_link_libraries(attn_train PRIVATE attn_mpi)
  # session.cpp alone learns that the MPI communicator exists.
  set_source_files_properties(${CMAKE_SOURCE_DIR}/train/distributed/session.cpp
                              PROPERTIES COMPILE_DEFINITIONS ATTN_HAVE_MPI)
  message(STATUS "attnlab: MPI ${MPI_CXX_VERSION} found: data-parallel training on")
else()
  message(STATUS "attnlab: MPI not found: single-process training only")
endif()
