# `cmake --install build --prefix P` puts the library, headers, CLI and loadable module
# under P and a CMake package, so that find_package(NativeOps) gives NativeOps::native_ops.
include(CMakePackageConfigHelpers)

set_target_properties(native_ops PROPERTIES EXPORT_NAME native_ops)
install(TARGETS native_ops EXPORT NativeOpsTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS native_ops_torch LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(TARGET native_ops_cuda_kernels)
  # Loaded from libnative_ops.so's own directory on the first cuda impl call.
  install(TARGETS native_ops_cuda_kernels LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(DIRECTORY lib/include/native_ops DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(native_ops_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/NativeOps)
install(EXPORT NativeOpsTargets NAMESPACE NativeOps:: DESTINATION ${native_ops_cmake_dir})
configure_package_config_file(cmake/NativeOpsConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/NativeOpsConfig.cmake INSTALL_DESTINATION ${native_ops_cmake_dir})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/NativeOpsConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/NativeOpsConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/NativeOpsConfigVersion.cmake
  DESTINATION ${native_ops_cmake_dir})

install(FILES man/native-ops.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES man/native-ops-policy.5 DESTINATION ${CMAKE_INSTALL_MANDIR}/man5)
