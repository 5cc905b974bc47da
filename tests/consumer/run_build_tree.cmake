# cmake -P script: builds and runs the consumer in SOURCE_DIR against the build tree
# itself (NativeOps_DIR), with nothing installed.
file(REMOVE_RECURSE ${WORK_DIR})
foreach(step
    "${CMAKE_COMMAND};-S;${SOURCE_DIR};-B;${WORK_DIR};-G;${GENERATOR};-DNativeOps_DIR=${NativeOps_DIR};-DTorch_DIR=${Torch_DIR};-DCMAKE_BUILD_TYPE=Release;-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
    "${CMAKE_COMMAND};--build;${WORK_DIR};--target;consumer"
    "${WORK_DIR}/consumer")
  execute_process(COMMAND ${step} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${step}")
  endif()
endforeach()
