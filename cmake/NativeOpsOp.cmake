# The op folders and the DSL table, as the build sees them.
#
# A DSL is a folder lib/src/dsls/<dsl>/ with a dsl.cmake and one entry in
# lib/src/dsls/dsls.cmake. Its dsl.cmake adds the DSL's runtime sources to the runtime and
# may define:
#   native_ops_dsl_<dsl>_sources(OP FILES...)  what to do with an op folder's files of
#                                              this DSL (its kernel sources);
#   native_ops_dsl_<dsl>_finish()              what to do once every op is known.
# Its dsl.cpp defines native_ops::builtin_dsls::make_<dsl>_dsl().
#
# An op is a folder kernels/<op>/ with an op.cmake that calls native_ops_op() once, and
# one entry in kernels/ops.cmake.

# native_ops_op(NAME [FEATURES FILES...] [<DSL> FILES...]... [OP_DB FILES...])
#   FEATURES: .cpp files that declare the op's shape features (selection.h) for every key,
#     go into the runtime, and define native_ops::kernels::register_<NAME>_features().
#   <DSL>: a DSL of the table in upper case (CPP, CUDA, TRITON). Its .cpp files hold the
#     op's conds and impls in that DSL, go into the runtime, and define
#     native_ops::kernels::register_<NAME>_<dsl>(); its other files (kernel sources: .cu,
#     Triton .py) go to the DSL's native_ops_dsl_<dsl>_sources().
#   OP_DB: the op's op database entries, which go into the test kit and define
#     native_ops::kernels::register_<NAME>_op_db().
# Files are relative to the folder of the op.cmake that calls it. The same folder builds
# into a plugin instead with native_ops_add_op_plugin() (host C++ only).
function(native_ops_op name)
  set(keywords OP_DB FEATURES)
  foreach(dsl IN LISTS NATIVE_OPS_DSLS)
    string(TOUPPER "${dsl}" keyword)
    list(APPEND keywords ${keyword})
  endforeach()
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "${keywords}")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "native_ops_op(${name}): '${arg_UNPARSED_ARGUMENTS}' follows no keyword: list files after one of ${keywords}")
  endif()
  if(NOT name MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "native_ops_op(${name}): an op folder's name must be a C identifier; it names its registration functions")
  endif()
  if(arg_FEATURES)
    list(TRANSFORM arg_FEATURES PREPEND "${CMAKE_CURRENT_LIST_DIR}/")
    target_sources(${native_ops_op_target} PRIVATE ${arg_FEATURES})
    set_property(GLOBAL APPEND PROPERTY ${native_ops_op_registrations} register_${name}_features)
  endif()
  foreach(dsl IN LISTS NATIVE_OPS_DSLS)
    string(TOUPPER "${dsl}" keyword)
    set(files ${arg_${keyword}})
    if(NOT files)
      continue()
    endif()
    list(TRANSFORM files PREPEND "${CMAKE_CURRENT_LIST_DIR}/")
    set(host ${files})
    list(FILTER host INCLUDE REGEX "\\.cpp$")
    set(kernel_sources ${files})
    list(FILTER kernel_sources EXCLUDE REGEX "\\.cpp$")
    if(NOT host)
      message(FATAL_ERROR "native_ops_op(${name}): ${keyword} lists no .cpp file to register its overrides from")
    endif()
    target_sources(${native_ops_op_target} PRIVATE ${host})
    set_property(GLOBAL APPEND PROPERTY ${native_ops_op_registrations} register_${name}_${dsl})
    if(native_ops_op_plugin AND kernel_sources)
      message(FATAL_ERROR "native_ops_op(${name}): a plugin built from op folders takes host C++ only, not ${kernel_sources}")
    elseif(native_ops_op_plugin)
      set_source_files_properties(${host} PROPERTIES COMPILE_OPTIONS "-fopenmp;-Wno-psabi")
    elseif(COMMAND native_ops_dsl_${dsl}_sources)
      cmake_language(CALL native_ops_dsl_${dsl}_sources ${name} ${host} ${kernel_sources})
    elseif(kernel_sources)
      message(FATAL_ERROR "native_ops_op(${name}): the ${dsl} DSL takes no kernel sources (${kernel_sources})")
    endif()
  endforeach()
  if(arg_OP_DB)
    list(TRANSFORM arg_OP_DB PREPEND "${CMAKE_CURRENT_LIST_DIR}/")
    target_sources(${native_ops_op_db_target} PRIVATE ${arg_OP_DB})
    set_property(GLOBAL APPEND PROPERTY ${native_ops_op_db_registrations} register_${name}_op_db)
  endif()
endfunction()

# Includes every DSL's dsl.cmake and every op's op.cmake, in their tables' order, then
# writes the generated tables: OUT_DIR/builtins.cpp (DSLs and overrides, into the runtime)
# and OUT_DIR/builtin_entries.cpp (op database entries, into the test kit).
function(native_ops_add_builtins dsl_dir op_dir out_dir)
  set(native_ops_op_target native_ops_runtime_objects)
  set(native_ops_op_db_target native_ops_testing)
  set(native_ops_op_registrations NATIVE_OPS_REGISTRATIONS)
  set(native_ops_op_db_registrations NATIVE_OPS_OP_DB_REGISTRATIONS)
  foreach(dsl IN LISTS NATIVE_OPS_DSLS)
    include(${dsl_dir}/${dsl}/dsl.cmake)
  endforeach()
  foreach(op IN LISTS NATIVE_OPS_OPS)
    if(NOT EXISTS ${op_dir}/${op}/op.cmake)
      message(FATAL_ERROR "kernels/ops.cmake lists '${op}', but ${op_dir}/${op}/op.cmake does not exist")
    endif()
    include(${op_dir}/${op}/op.cmake)
  endforeach()
  foreach(dsl IN LISTS NATIVE_OPS_DSLS)
    if(COMMAND native_ops_dsl_${dsl}_finish)
      cmake_language(CALL native_ops_dsl_${dsl}_finish)
    endif()
  endforeach()

  get_property(registrations GLOBAL PROPERTY NATIVE_OPS_REGISTRATIONS)
  get_property(entries GLOBAL PROPERTY NATIVE_OPS_OP_DB_REGISTRATIONS)
  native_ops_declarations(kernel_declarations calls ${registrations})
  set(declarations "")
  set(factories "")
  foreach(dsl IN LISTS NATIVE_OPS_DSLS)
    string(APPEND declarations "std::unique_ptr<Dsl> make_${dsl}_dsl();\n")
    string(APPEND factories "  dsls.push_back(builtin_dsls::make_${dsl}_dsl());\n")
  endforeach()
  file(CONFIGURE OUTPUT ${out_dir}/builtins.cpp CONTENT "\
// Generated by cmake/NativeOpsOp.cmake from lib/src/dsls/dsls.cmake and kernels/ops.cmake.
#include \"runtime/builtins.h\"

namespace native_ops::builtin_dsls {
${declarations}}  // namespace native_ops::builtin_dsls

namespace native_ops::kernels {
${kernel_declarations}}  // namespace native_ops::kernels

namespace native_ops::detail {

std::vector<std::unique_ptr<Dsl>> make_builtin_dsls() {
  std::vector<std::unique_ptr<Dsl>> dsls;
${factories}  return dsls;
}

void register_builtin_overrides() {
${calls}}

}  // namespace native_ops::detail
" @ONLY)
  native_ops_declarations(kernel_declarations calls ${entries})
  file(CONFIGURE OUTPUT ${out_dir}/builtin_entries.cpp CONTENT "\
// Generated by cmake/NativeOpsOp.cmake from kernels/ops.cmake.
#include \"testing/builtin_entries.h\"

namespace native_ops::kernels {
${kernel_declarations}}  // namespace native_ops::kernels

namespace native_ops::detail {

void register_builtin_op_entries() {
${calls}}

}  // namespace native_ops::detail
" @ONLY)
  target_sources(native_ops_runtime_objects PRIVATE ${out_dir}/builtins.cpp)
  target_sources(native_ops_testing PRIVATE ${out_dir}/builtin_entries.cpp)
endfunction()

# For a DSL's native_ops_dsl_<dsl>_sources(): sets OUT to FILES ending in .EXTENSION, and
# stops the configuration, naming the op, on any that is neither that nor .cpp.
function(native_ops_kernel_sources out op dsl extension)
  set(kernels ${ARGN})
  list(FILTER kernels INCLUDE REGEX "\\.${extension}$")
  set(other ${ARGN})
  list(FILTER other EXCLUDE REGEX "\\.(${extension}|cpp)$")
  if(other)
    message(FATAL_ERROR "native_ops_op(${op}): the ${dsl} DSL takes .cpp and .${extension} files, not ${other}")
  endif()
  set(${out} ${kernels} PARENT_SCOPE)
endfunction()

# Sets DECLARATIONS to the declarations of FUNCTIONS (registration functions in
# native_ops::kernels) and CALLS to a call of each, in order.
function(native_ops_declarations declarations calls)
  set(declared "")
  set(called "")
  foreach(function IN LISTS ARGN)
    string(APPEND declared "void ${function}();\n")
    string(APPEND called "  kernels::${function}();\n")
  endforeach()
  set(${declarations} "${declared}" PARENT_SCOPE)
  set(${calls} "${called}" PARENT_SCOPE)
endfunction()

# native_ops_add_op_plugin(TARGET OP_DIR...): builds op folders (each with an op.cmake, as
# under kernels/) into the plugin library TARGET instead of the runtime: `native-ops --load`
# or NATIVE_OPS_PLUGINS loads it, and its registration runs the folders' registrations in
# order. Host C++ only: the cuda and triton DSLs' kernel sources build into the runtime.
function(native_ops_add_op_plugin target)
  add_library(${target} MODULE)
  target_link_libraries(${target} PRIVATE native_ops_testing)
  target_link_options(${target} PRIVATE -fopenmp)
  set(native_ops_op_plugin ON)
  set(native_ops_op_target ${target})
  set(native_ops_op_db_target ${target})
  set(native_ops_op_registrations NATIVE_OPS_PLUGIN_REGISTRATIONS_${target})
  set(native_ops_op_db_registrations NATIVE_OPS_PLUGIN_REGISTRATIONS_${target})
  foreach(dir IN LISTS ARGN)
    include(${dir}/op.cmake)
  endforeach()
  get_property(registrations GLOBAL PROPERTY NATIVE_OPS_PLUGIN_REGISTRATIONS_${target})
  native_ops_declarations(kernel_declarations calls ${registrations})
  file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/${target}_plugin.cpp CONTENT "\
// Generated by cmake/NativeOpsOp.cmake (native_ops_add_op_plugin): the plugin's entry points.
#include \"native_ops/plugin.h\"

namespace native_ops::kernels {
${kernel_declarations}}  // namespace native_ops::kernels

namespace {

void register_op_folders() {
  using namespace native_ops;
${calls}}

}  // namespace

NATIVE_OPS_PLUGIN(register_op_folders)
" @ONLY)
  target_sources(${target} PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/${target}_plugin.cpp)
endfunction()
