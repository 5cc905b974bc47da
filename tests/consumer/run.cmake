# cmake -P script: installs native-ops from BUILD_DIR into WORK_DIR/staging, moves that
# prefix to WORK_DIR/moved (nothing may point back to where it was installed), then runs
# the installed CLI and builds and runs the consumer projects in SOURCE_DIR against the
# moved prefix.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/staging)
file(RENAME ${WORK_DIR}/staging ${WORK_DIR}/moved)
run(${WORK_DIR}/moved/bin/native-ops list --op add_.Tensor)
run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/moved -DTorch_DIR=${Torch_DIR} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/consumer)
run(${WORK_DIR}/build/consumer_sweep)
