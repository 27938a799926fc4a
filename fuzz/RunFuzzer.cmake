# Runs one fuzz target as a test: replays every file of REGRESSIONS (crashes
# found before), then fuzzes for SECONDS from a fresh corpus of SEEDS.
# Fails if any run fails (libFuzzer exits non-zero on a crash, a sanitizer
# report or an abort); the crashing input is left in WORKDIR.
file(REMOVE_RECURSE ${CORPUS})
file(MAKE_DIRECTORY ${CORPUS})
foreach(seed ${SEEDS})
  file(COPY ${seed} DESTINATION ${CORPUS})
endforeach()
file(GLOB regressions ${REGRESSIONS}/*)
if(regressions)
  execute_process(COMMAND ${FUZZER} ${regressions} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "fuzz: a regression input fails again (${REGRESSIONS})")
  endif()
endif()
execute_process(COMMAND ${FUZZER} -max_total_time=${SECONDS} -timeout=20 -rss_limit_mb=4096
                        -print_final_stats=1 ${CORPUS}
                WORKING_DIRECTORY ${WORKDIR} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "fuzz: ${FUZZER} failed (exit ${rc}); its crash input is in ${WORKDIR}")
endif()
