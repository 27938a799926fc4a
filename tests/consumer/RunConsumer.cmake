# @file RunConsumer.cmake
# @brief Script mode (cmake -P): install BUILD_DIR into PREFIX, configure and
# build PROJECT_DIR in WORK_DIR with CMAKE_PREFIX_PATH=PREFIX, run its program.
# Fails with the failing step's output.
foreach(v BUILD_DIR PREFIX PROJECT_DIR WORK_DIR GENERATOR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "RunConsumer.cmake: -D${v}=... is required")
  endif()
endforeach()

function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer: ${what} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "consumer: ${what}: ok")
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${PREFIX}" "${WORK_DIR}")
step("install into ${PREFIX}" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${PREFIX}")
set(cuda_arg "")
if(CUDA_COMPILER)
  set(cuda_arg "-DCMAKE_CUDA_COMPILER=${CUDA_COMPILER}")
endif()
step("configure" ${CMAKE_COMMAND} -S "${PROJECT_DIR}" -B "${WORK_DIR}" -G "${GENERATOR}"
     -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=${PREFIX}" ${cuda_arg})
step("build" ${CMAKE_COMMAND} --build "${WORK_DIR}" -j 2)
foreach(f allreduce.cu allreduce.h allreduce.plan.h allreduce.programs.h allreduce.device.cuh allreduce.latency.cu
          allreduce.throughput.cu allreduce.direct.cu allreduce.pairs.cu)
  set(f consumer_allreduce.purlin/${f})
  if(NOT EXISTS "${WORK_DIR}/${f}")
    message(FATAL_ERROR "consumer: purlin_add_collective did not produce ${f}")
  endif()
endforeach()
step("run" "${WORK_DIR}/consumer_allreduce_test")
message(STATUS "consumer: ${step_output}")
