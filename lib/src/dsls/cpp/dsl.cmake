# The cpp DSL: host C++ compiled into the runtime.
target_sources(native_ops_runtime_objects PRIVATE ${CMAKE_CURRENT_LIST_DIR}/dsl.cpp)

# at::parallel_for is OpenMP code inlined from ATen's headers: without -fopenmp it runs
# on one thread. The libgomp.so.1 it binds to at run time is the one libtorch loads.
# -Wno-psabi: simd.h passes 64-byte vectors between always-inline helpers only. The
# runtime's precompiled headers are built without -fopenmp, which g++ refuses to mix.
function(native_ops_dsl_cpp_sources op)
  set_source_files_properties(${ARGN} PROPERTIES COMPILE_OPTIONS "-fopenmp;-Wno-psabi" SKIP_PRECOMPILE_HEADERS ON)
endfunction()
