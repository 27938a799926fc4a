# CheckStaticPurlinc.cmake -DBIN=<purlinc>: fails unless the binary built with
# PURLIN_STATIC_PURLINC needs only the C library (and the loader) at run time:
# no Clang, LLVM, fmt or C++ runtime shared library.
execute_process(COMMAND readelf -d ${BIN} OUTPUT_VARIABLE dyn RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readelf -d ${BIN} failed")
endif()
string(REGEX MATCHALL "Shared library: \\[[^]]+\\]" needed "${dyn}")
foreach(n IN LISTS needed)
  string(REGEX REPLACE ".*\\[(.*)\\]" "\\1" lib "${n}")
  if(NOT lib MATCHES "^(libc|libm|libpthread|libdl|librt|ld-linux-x86-64)\\.so")
    message(FATAL_ERROR "${BIN} needs ${lib} at run time (PURLIN_STATIC_PURLINC: the C library only)")
  endif()
  message(STATUS "needs ${lib}")
endforeach()
