# @file PurlinCollective.cmake
# @brief purlin_add_collective(): compile .pl collective declarations with
# purlinc and build the generated CUDA into a static library.
#
# Works inside the Purlin build tree (uses the `purlinc` and `purlin_runtime`
# targets) and from another project after `find_package(purlin)` (uses the
# imported targets `purlin::purlinc` and `purlin::runtime`).

include_guard(DIRECTORY)

# CMake 3.25 does not know nvcc's C++20 flag (the generated code and the
# runtime headers are C++20); tell it, in the including directory's scope.
if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
endif()

#[=======================================================================[.rst:
purlin_add_collective
---------------------

Compile collective declarations (``.pl`` files) with purlinc and build the
generated CUDA into a static library::

  purlin_add_collective(
    TARGET <name>                  # library to create (required)
    SOURCES <a.pl> [<b.pl> ...]    # declarations (required); relative paths
                                   # are taken from CMAKE_CURRENT_SOURCE_DIR
    [POLICY <policies.json>]       # codesign policies (purlinc --policy);
                                   # default: purlinc's built-in policies
    [ARCHS <80> [<90> ...]]        # CUDA architectures of the library;
                                   # default: CMAKE_CUDA_ARCHITECTURES.
                                   # The highest one also selects purlinc's
                                   # built-in policy (--arch sm_XX).
    [COLLECTIVES <name> ...]       # emit only these aliases (purlinc
                                   # --collective); default: every alias
    [IR_DUMP]                      # also write <stem>.ir (the SNAC IR text)
  )

For each ``<stem>.pl`` purlinc writes ``<stem>.h`` (the host API),
``<stem>.cu`` (its definitions), ``<stem>.plan.h`` (the rules of each call
plan), ``<stem>.programs.h`` (policies and the
instantiation table, for programs that launch the kernels themselves),
``<stem>.device.cuh`` (the device code) and the kernel units
``<stem>.{latency,throughput,direct,pairs}.cu`` into
``${CMAKE_CURRENT_BINARY_DIR}/<name>.purlin/`` (and ``<stem>.ir`` with
``IR_DUMP``). They are regenerated when the ``.pl``, the policy file or
purlinc itself changes. ``<name>`` is a STATIC library of the ``.cu`` files
(each kernel compiled in one unit, the units in parallel; nvcc ``--threads``
across several architectures) that links ``purlin_runtime``
(``purlin::runtime``) PUBLIC and has the generated directory as a PUBLIC
include directory, so a consumer writes::

  purlin_add_collective(TARGET my_ar SOURCES allreduce.pl)
  target_link_libraries(app PRIVATE my_ar)   # then #include "allreduce.h"

The header declares ``purlin::gen::<alias>(comm, in, out, count, dtype, op,
stream)`` and the C function ``purlin_<alias>(...)`` (see docs/codegen.md).
Unknown arguments are reported with a warning and ignored.
#]=======================================================================]
function(purlin_add_collective)
  set(options IR_DUMP)
  set(one_value TARGET POLICY)
  set(multi_value SOURCES ARCHS COLLECTIVES)
  cmake_parse_arguments(ARG "${options}" "${one_value}" "${multi_value}" ${ARGN})

  if(ARG_UNPARSED_ARGUMENTS)
    message(WARNING "purlin_add_collective: ignoring unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(ARG_KEYWORDS_MISSING_VALUES)
    message(WARNING "purlin_add_collective: keywords given without a value: ${ARG_KEYWORDS_MISSING_VALUES}")
  endif()
  if(NOT ARG_TARGET)
    message(FATAL_ERROR "purlin_add_collective: TARGET <name> is required")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "purlin_add_collective(${ARG_TARGET}): SOURCES <a.pl> ... is required")
  endif()

  # The compiler: the target of this build tree, else the installed one.
  if(TARGET purlinc)
    set(purlinc_exe "$<TARGET_FILE:purlinc>")
    set(purlinc_dep purlinc)
  elseif(TARGET purlin::purlinc)
    set(purlinc_exe "$<TARGET_FILE:purlin::purlinc>")
    set(purlinc_dep purlin::purlinc)
  else()
    message(FATAL_ERROR "purlin_add_collective(${ARG_TARGET}): no purlinc: "
                        "build Purlin with PURLIN_BUILD_COMPILER=ON or call find_package(purlin)")
  endif()
  # The runtime library the generated code instantiates.
  if(TARGET purlin_runtime)
    set(runtime_lib purlin_runtime)
  elseif(TARGET purlin::runtime)
    set(runtime_lib purlin::runtime)
  else()
    message(FATAL_ERROR "purlin_add_collective(${ARG_TARGET}): no Purlin runtime target "
                        "(purlin_runtime or purlin::runtime); CUDA is required")
  endif()

  set(archs ${ARG_ARCHS})
  if(NOT archs)
    set(archs ${CMAKE_CUDA_ARCHITECTURES})
  endif()
  # purlinc's built-in policy follows the newest architecture asked for.
  set(policy_arch "")
  foreach(a IN LISTS archs)
    string(REGEX MATCH "^[0-9]+" num "${a}")
    if(num AND (NOT policy_arch OR num GREATER policy_arch))
      set(policy_arch ${num})
    endif()
  endforeach()

  set(common_args "")
  set(extra_deps "")
  if(ARG_POLICY)
    get_filename_component(policy_abs "${ARG_POLICY}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND common_args "--policy=${policy_abs}")
    list(APPEND extra_deps "${policy_abs}")
  endif()
  if(policy_arch)
    if(policy_arch GREATER_EQUAL 100)
      list(APPEND common_args "--arch=sm_100")
    elseif(policy_arch GREATER_EQUAL 90)
      list(APPEND common_args "--arch=sm_90")
    else()
      list(APPEND common_args "--arch=sm_80")
    endif()
  endif()
  foreach(c IN LISTS ARG_COLLECTIVES)
    list(APPEND common_args "--collective=${c}")
  endforeach()

  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/${ARG_TARGET}.purlin")
  file(MAKE_DIRECTORY "${out_dir}")
  set(cu_files "")
  set(h_files "")
  foreach(src IN LISTS ARG_SOURCES)
    get_filename_component(src_abs "${src}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    get_filename_component(stem "${src}" NAME_WE)
    # purlinc's files for one .pl (docs/codegen.md, "Files"): the host API
    # NAME.cu and the kernel units NAME.<unit>.cu compile in parallel.
    set(cu "${out_dir}/${stem}.cu")
    set(hdr "${out_dir}/${stem}.h")
    set(units "")
    foreach(unit IN ITEMS latency throughput direct pairs)
      list(APPEND units "${out_dir}/${stem}.${unit}.cu")
    endforeach()
    set(outputs "${cu}" "${hdr}" "${out_dir}/${stem}.plan.h" "${out_dir}/${stem}.programs.h" "${out_dir}/${stem}.device.cuh" ${units})
    set(commands COMMAND ${purlinc_exe} "${src_abs}" --emit=cuda ${common_args} -o "${cu}")
    if(ARG_IR_DUMP)
      list(APPEND outputs "${out_dir}/${stem}.ir")
      list(APPEND commands COMMAND ${purlinc_exe} "${src_abs}" --emit=ir ${common_args}
                                   -o "${out_dir}/${stem}.ir")
    endif()
    # purlinc leaves a file whose text does not change untouched, and the
    # files are byproducts of a stamp (Ninja: restat), so a new purlinc that
    # prints the same code recompiles nothing, and one that changes a unit
    # recompiles that unit only.
    set(stamp "${out_dir}/${stem}.stamp")
    list(APPEND commands COMMAND ${CMAKE_COMMAND} -E touch "${stamp}")
    add_custom_command(
      OUTPUT "${stamp}"
      BYPRODUCTS ${outputs}
      ${commands}
      DEPENDS ${purlinc_dep} "${src_abs}" ${extra_deps}
      COMMENT "purlinc ${stem}.pl -> ${ARG_TARGET}.purlin/${stem}.cu, ${stem}.h, ${stem}.<unit>.cu"
      VERBATIM)
    list(APPEND cu_files "${cu}" ${units})
    list(APPEND h_files "${hdr}" "${stamp}")  # the stamp: the library's sources wait for purlinc
  endforeach()

  add_library(${ARG_TARGET} STATIC ${cu_files} ${h_files})
  target_include_directories(${ARG_TARGET} PUBLIC "$<BUILD_INTERFACE:${out_dir}>")
  target_link_libraries(${ARG_TARGET} PUBLIC ${runtime_lib})
  set_target_properties(${ARG_TARGET} PROPERTIES
    CUDA_STANDARD 20
    CUDA_STANDARD_REQUIRED ON
    CXX_STANDARD 20
    CXX_STANDARD_REQUIRED ON
    CUDA_ARCHITECTURES "${archs}"
    POSITION_INDEPENDENT_CODE ON
    LINKER_LANGUAGE CUDA)
  # Several architectures: nvcc compiles them in parallel within a unit.
  list(LENGTH archs n_archs)
  if(n_archs GREATER 1)
    target_compile_options(${ARG_TARGET} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--threads=${n_archs}>)
  endif()
endfunction()
