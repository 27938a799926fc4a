# @file CheckGenerated.cmake
# @brief Script mode (cmake -P): runs purlinc on each example into WORK_DIR
# and compares with the committed files in COMMITTED_DIR; on a difference
# prints `diff -u committed new` and fails. Fix: build the `regenerate`
# target and commit the result.
foreach(v PURLINC EXAMPLES ARCH DSL_DIR COMMITTED_DIR WORK_DIR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "CheckGenerated.cmake: -D${v}=... is required")
  endif()
endforeach()
string(REPLACE "," ";" EXAMPLES "${EXAMPLES}")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(stale "")
foreach(ex IN LISTS EXAMPLES)
  string(REPLACE ":" ";" parts "${ex}")
  list(GET parts 0 stem)
  list(GET parts 1 coll)
  execute_process(
    COMMAND "${PURLINC}" "${DSL_DIR}/${stem}.pl" --emit=cuda --arch=${ARCH}
            --collective=${coll} -o "${WORK_DIR}/${stem}.cu"
    RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "purlinc failed on ${stem}.pl (${rc}):\n${err}")
  endif()
  foreach(ext cu h plan.h programs.h device.cuh latency.cu throughput.cu direct.cu pairs.cu)
    set(old "${COMMITTED_DIR}/${stem}.${ext}")
    set(new "${WORK_DIR}/${stem}.${ext}")
    if(NOT EXISTS "${old}")
      list(APPEND stale "${stem}.${ext} (not committed)")
      continue()
    endif()
    execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${old}" "${new}" RESULT_VARIABLE same)
    if(NOT same EQUAL 0)
      list(APPEND stale "${stem}.${ext}")
      execute_process(COMMAND diff -u "${old}" "${new}")
    endif()
  endforeach()
endforeach()
if(stale)
  message(FATAL_ERROR "generated/ is out of date with purlinc: ${stale}\n"
                      "Rebuild with `cmake --build <build> --target regenerate` and commit generated/.")
endif()
message(STATUS "generated/ matches purlinc's output")
