# @file validate_policy.cmake
# @brief CTest script: synthetic measurements -> make_policy.py -> policy
# JSON -> purlinc --policy --emit=cuda, which must succeed and carry the
# synthetic optimum into the generated policy struct; a corrupted copy of
# the JSON must be rejected by purlinc (so the check can fail).
# Inputs: -DPYTHON= -DPURLINC= -DSRC=<bench/tune> -DWORK=<scratch dir>.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

function(run_checked)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
endfunction()

run_checked(${PYTHON} ${SRC}/test_make_policy.py --write-synthetic ${WORK}/measurements.csv)
run_checked(${PYTHON} ${SRC}/make_policy.py ${WORK}/measurements.csv -o ${WORK}/policy.json)
run_checked(${PURLINC} ${SRC}/testdata/collectives.pl --policy ${WORK}/policy.json
            --emit=cuda -o ${WORK}/collectives.cu)

file(READ ${WORK}/collectives.programs.h cu)  # the policy structs (docs/codegen.md "Files")
# The world-2 entry: crossover 256 KiB, 8 latency CTAs x 512 threads, and
# stage 8 / consume 16 / gather 8 / chunk 1 MiB; pipeline 8 x 16 KiB.
foreach(expect
    ".latencyMaxBytes = 262144, .latencyCtas = 8, .latencyThreads = 512,"
    ".stageCtas = 8, .consumeCtas = 16, .gatherCtas = 8, .threads = 512,"
    ".chunkBytes = 1048576, .push = false,"
    ".directThreads = 512}, // n = 2"
    "pipelineStages = 8;"
    "stageBytes = 16384;")
  string(FIND "${cu}" "${expect}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "generated code lacks '${expect}' (policy ${WORK}/policy.json not applied?)")
  endif()
endforeach()

# A corrupted policy (threads not a multiple of 32) must be rejected.
file(READ ${WORK}/policy.json json)
string(REPLACE "\"threads\": 512" "\"threads\": 500" bad "${json}")
file(WRITE ${WORK}/bad.json "${bad}")
execute_process(COMMAND ${PURLINC} ${SRC}/testdata/collectives.pl --policy ${WORK}/bad.json
                --emit=cuda -o ${WORK}/bad.cu RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
if(rc EQUAL 0)
  message(FATAL_ERROR "purlinc accepted a corrupted policy (threads 500)")
endif()
string(FIND "${err}${out}" "threads" named)
if(named EQUAL -1)
  message(FATAL_ERROR "purlinc's error for the corrupted policy does not name the field:\n${err}${out}")
endif()
message(STATUS "policy from make_policy.py accepted by purlinc; corrupted copy rejected")
