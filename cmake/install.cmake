# `cmake --install`: attnlab as a library for coursework.
#
#   cmake --install build/release --prefix P
#     P/lib/libattn_{autograd,autograd_f64,nn,nn_f64,data,train}.a
#     P/include/attnlab/{autograd,nn,data,train}/...h    the source tree's paths
#     P/lib/cmake/attnlab/                                the CMake package
#     P/bin/attnlab, P/share/attnlab/gdb/                 the CLI and the gdb printers
#
# and in an outside project (examples/coursework/ is one):
#   find_package(attnlab CONFIG REQUIRED)                          # cmake -DCMAKE_PREFIX_PATH=P
#   target_link_libraries(app PRIVATE attnlab::attnlab)            # float32: what programs run
#   target_link_libraries(check PRIVATE attnlab::attnlab_f64)      # float64: for attn::gradcheck
#   add_library(mine MODULE mine.cpp)                              # attnlab run ... --plugin
#   target_link_libraries(mine PRIVATE attnlab::plugin)            # headers only (nn/mixer/plugin.h)
# (never both in one program: the two builds define the same symbols with different reals).
# OpenMP, fmt, nlohmann_json and the OpenMP build of OpenBLAS are found again by the package
# (cmake/attnlabConfig.cmake.in).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(ATTN_INSTALL_LIBS attn_autograd attn_autograd_f64 attn_nn attn_nn_f64 attn_data attn_train)
# With MPI, attn_train links attn_mpi (train/distributed/mpi_communicator.cpp): a static library
# brings its own dependencies along, so attn_mpi is installed too, and the package finds MPI.
if(TARGET attn_mpi)
  list(APPEND ATTN_INSTALL_LIBS attn_mpi)
  set(ATTN_PACKAGE_NEEDS_MPI ON)
else()
  set(ATTN_PACKAGE_NEEDS_MPI OFF)
endif()
foreach(lib ${ATTN_INSTALL_LIBS})
  # The build reads headers from the source tree. An installed copy adds include/attnlab, where
  # the headers' own includes ("autograd/tensor.h") resolve, and include, for <attnlab/...>.
  set_property(
    TARGET ${lib}
    PROPERTY INTERFACE_INCLUDE_DIRECTORIES $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}>
             $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/attnlab>
             $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  # OpenBLAS is linked by its full path here; the package names it attnlab::openblas instead
  # and finds it on the machine that uses the package.
  get_target_property(links ${lib} INTERFACE_LINK_LIBRARIES)
  set(portable "")
  foreach(item ${links})
    if(item STREQUAL ATTN_OPENBLAS_LIB)
      list(APPEND portable "$<BUILD_INTERFACE:${item}>" "$<INSTALL_INTERFACE:attnlab::openblas>")
    else()
      list(APPEND portable "${item}")
    endif()
  endforeach()
  set_property(TARGET ${lib} PROPERTY INTERFACE_LINK_LIBRARIES "${portable}")
  string(REPLACE "attn_" "" export_name ${lib})
  set_property(TARGET ${lib} PROPERTY EXPORT_NAME ${export_name})
endforeach()

# attnlab::attnlab and attnlab::attnlab_f64: one name to link, C++20 for whoever links it.
add_library(attn_package INTERFACE)
target_link_libraries(attn_package INTERFACE attn_train attn_data attn_nn attn_autograd)
target_compile_features(attn_package INTERFACE cxx_std_20)
set_property(TARGET attn_package PROPERTY EXPORT_NAME attnlab)
add_library(attn_package_f64 INTERFACE)
target_link_libraries(attn_package_f64 INTERFACE attn_nn_f64 attn_autograd_f64)
target_compile_features(attn_package_f64 INTERFACE cxx_std_20)
set_property(TARGET attn_package_f64 PROPERTY EXPORT_NAME attnlab_f64)

# attnlab::plugin: a `--plugin` shared library's headers, without attnlab's libraries (the
# attnlab executable that loads it has them; nn/mixer/plugin.h). ATTN_PLUGIN_VERSION goes into
# the plugin's ABI stamp, which the loader compares with its own version.
add_library(attn_plugin INTERFACE)
target_include_directories(attn_plugin INTERFACE $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}>
                                                 $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/attnlab>
                                                 $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_definitions(attn_plugin INTERFACE ATTN_PLUGIN_VERSION="${PROJECT_VERSION}")
target_link_libraries(attn_plugin INTERFACE fmt::fmt nlohmann_json::nlohmann_json)
target_compile_features(attn_plugin INTERFACE cxx_std_20)
set_property(TARGET attn_plugin PROPERTY EXPORT_NAME plugin)

install(TARGETS ${ATTN_INSTALL_LIBS} attn_package attn_package_f64 attn_plugin
        EXPORT attnlabTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
foreach(part autograd nn data train)
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/${part}
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/attnlab
          FILES_MATCHING PATTERN "*.h")
endforeach()

set(ATTN_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/attnlab)
install(EXPORT attnlabTargets NAMESPACE attnlab:: DESTINATION ${ATTN_PACKAGE_DIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/attnlabConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/attnlabConfig.cmake
                              INSTALL_DESTINATION ${ATTN_PACKAGE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/attnlabConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/attnlabConfig.cmake ${CMAKE_BINARY_DIR}/attnlabConfigVersion.cmake
        DESTINATION ${ATTN_PACKAGE_DIR})

if(TARGET attnlab)
  install(TARGETS attnlab RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(DIRECTORY ${CMAKE_SOURCE_DIR}/tools/gdb/ DESTINATION ${CMAKE_INSTALL_DATADIR}/attnlab/gdb
        PATTERN "__pycache__" EXCLUDE)
