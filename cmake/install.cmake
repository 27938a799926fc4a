# @file install.cmake
# @brief Install rules and the package config: `cmake --install <build>`
# puts purlinc, the runtime library and headers, the DSL vocabulary header
# and purlin_add_collective() under a prefix, so another project can do
#   find_package(purlin REQUIRED)
#   purlin_add_collective(TARGET my_ar SOURCES allreduce.pl)
#
# Included by the top-level CMakeLists.txt after every subdirectory, so the
# targets below exist when present. The package config (purlinConfig.cmake)
# defines the imported targets purlin::purlinc and purlin::runtime itself
# (rather than through install(EXPORT)), so it does not depend on how the
# runtime target spells its include directories.

include(CMakePackageConfigHelpers)

set(PURLIN_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/purlin"
    CACHE STRING "Where purlinConfig.cmake is installed, relative to the prefix")

set(_purlin_have_purlinc OFF)
if(TARGET purlinc)
  install(TARGETS purlinc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  set(_purlin_have_purlinc ON)
endif()

# The DSL vocabulary header: force-included by purlinc, and included by
# users who compile a .pl as ordinary C++.
if(EXISTS ${PROJECT_SOURCE_DIR}/compiler/include/purlin/dsl)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/compiler/include/purlin/dsl
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/purlin)
  # Its consume ops, layouts, roots and datapaths are vocabulary.def's rows.
  install(FILES ${PROJECT_SOURCE_DIR}/runtime/include/purlin/vocabulary.def
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/purlin)
endif()

set(_purlin_have_runtime OFF)
set(_purlin_runtime_kind STATIC)
set(_purlin_runtime_file "")
set(_purlin_runtime_deps "")
if(TARGET purlin_runtime)
  set(_purlin_have_runtime ON)
  get_target_property(_kind purlin_runtime TYPE)
  if(_kind STREQUAL "SHARED_LIBRARY")
    set(_purlin_runtime_kind SHARED)
    set(_purlin_runtime_file "${CMAKE_SHARED_LIBRARY_PREFIX}purlin_runtime${CMAKE_SHARED_LIBRARY_SUFFIX}")
  else()
    set(_purlin_runtime_file "${CMAKE_STATIC_LIBRARY_PREFIX}purlin_runtime${CMAKE_STATIC_LIBRARY_SUFFIX}")
  endif()
  if(TARGET purlin_shared)  # libpurlin.so (docs/python.md)
    install(TARGETS purlin_shared LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  endif()
  install(TARGETS purlin_runtime
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  # What a consumer must link besides the library: the runtime's own link
  # libraries that are CUDA toolkit targets or plain system libraries.
  # Other (build-tree-only) targets cannot be named from an install.
  get_target_property(_libs purlin_runtime LINK_LIBRARIES)
  if(_libs)
    foreach(_lib IN LISTS _libs)
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" _lib "${_lib}")
      if(_lib MATCHES "^CUDA::" OR _lib MATCHES "^Threads::")
        list(APPEND _purlin_runtime_deps "${_lib}")
      elseif(TARGET ${_lib})
        get_target_property(_t ${_lib} TYPE)
        if(NOT _t STREQUAL "INTERFACE_LIBRARY")
          message(WARNING "purlin install: purlin_runtime links build-tree target ${_lib}; "
                          "installed consumers will not link it")
        endif()
      elseif(NOT _lib MATCHES "^\\$<")
        list(APPEND _purlin_runtime_deps "${_lib}")
      endif()
    endforeach()
  endif()
  list(REMOVE_DUPLICATES _purlin_runtime_deps)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/include/purlin
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endif()

install(FILES ${PROJECT_SOURCE_DIR}/cmake/PurlinCollective.cmake
        DESTINATION ${PURLIN_INSTALL_CMAKEDIR})

set(PURLIN_CONFIG_BINDIR "${CMAKE_INSTALL_BINDIR}")
set(PURLIN_CONFIG_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
set(PURLIN_CONFIG_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/purlinConfig.cmake.in
  ${PROJECT_BINARY_DIR}/purlinConfig.cmake
  INSTALL_DESTINATION ${PURLIN_INSTALL_CMAKEDIR}
  PATH_VARS PURLIN_CONFIG_BINDIR PURLIN_CONFIG_LIBDIR PURLIN_CONFIG_INCLUDEDIR)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/purlinConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/purlinConfig.cmake
              ${PROJECT_BINARY_DIR}/purlinConfigVersion.cmake
        DESTINATION ${PURLIN_INSTALL_CMAKEDIR})
