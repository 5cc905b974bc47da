# `cmake --install build --prefix P` lays out P as a relocatable package:
#   lib/libnative_ops.so*          NativeOps::runtime     (component runtime)
#   lib/libnative_ops_cuda_kernels.so, lib/libnative_ops_torch.so  (component runtime)
#   lib/libnative_ops_testing.so*  NativeOps::testing     (component testing)
#   bin/native-ops, man pages                              (component cli)
#   include/native_ops/, lib/cmake/NativeOps/
# Nothing in it names the build machine's paths but the libtorch fallback below: the
# package finds libtorch with find_package(Torch), and its libraries find each other
# through $ORIGIN. spdlog and fmt are compiled in; libtorch 2.11 (the same version) is
# the one run-time dependency. The build tree is a package too (NativeOps_DIR=build).
include(CMakePackageConfigHelpers)

# Installed libraries and programs find each other through $ORIGIN, and libtorch in the
# directory it was linked from (elsewhere: LD_LIBRARY_PATH, or a program that loaded it).
get_filename_component(native_ops_torch_lib_dir "${TORCH_LIBRARY}" DIRECTORY)
set(native_ops_install_rpath "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}" "${native_ops_torch_lib_dir}")
set_target_properties(native_ops_runtime native_ops_testing native-ops native_ops_torch
  PROPERTIES INSTALL_RPATH "${native_ops_install_rpath}")

install(TARGETS native_ops_runtime EXPORT NativeOpsTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT runtime
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS native_ops_testing EXPORT NativeOpsTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT testing NAMELINK_COMPONENT testing
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS native_ops_torch LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime)
if(TARGET native_ops_cuda_kernels)
  # Loaded from the runtime library's own directory on the first cuda impl call.
  install(TARGETS native_ops_cuda_kernels LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime)
endif()
install(DIRECTORY lib/include/native_ops DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT runtime
  PATTERN testing EXCLUDE)
install(DIRECTORY lib/include/native_ops/testing DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/native_ops COMPONENT testing)
install(TARGETS native-ops RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)
install(FILES man/native-ops.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT cli)
install(FILES man/native-ops-policy.5 DESTINATION ${CMAKE_INSTALL_MANDIR}/man5 COMPONENT cli)

set(native_ops_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/NativeOps)
install(EXPORT NativeOpsTargets NAMESPACE NativeOps:: DESTINATION ${native_ops_cmake_dir} COMPONENT runtime)
configure_package_config_file(cmake/NativeOpsConfig.cmake.in
  ${PROJECT_BINARY_DIR}/NativeOpsConfig.cmake INSTALL_DESTINATION ${native_ops_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/NativeOpsConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/NativeOpsConfig.cmake ${PROJECT_BINARY_DIR}/NativeOpsConfigVersion.cmake
  DESTINATION ${native_ops_cmake_dir} COMPONENT runtime)
# The build tree as a package: the same config beside the targets of the build tree.
export(EXPORT NativeOpsTargets NAMESPACE NativeOps:: FILE ${PROJECT_BINARY_DIR}/NativeOpsTargets.cmake)
