# TritonExt.cmake: the CMake API extensions use. Included by the root CMakeLists.txt.
#
#   triton_ext_add_pass(<Name> SOURCES <files...> [TD <Passes.td>] [VERSION <x.y.z>])
#   triton_ext_add_dialect(<Name> SOURCES <files...> [TD <Dialect.td>...] [VERSION <x.y.z>])
#   triton_ext_add_language(<Name> SOURCES <files...> [TD ...] [DEPENDS <targets...>])
#
# Each builds one plugin: target and library TritonExt<Name>, written to
# ${TRITON_EXT_PLUGIN_DIR}/libTritonExt<Name>.so (all plugins share that folder). `TD` files go
# through mlir-tblgen; for a pass, `Passes.td` yields `Passes.h.inc` (-gen-pass-decls) in the
# target's include path and lib<Target>.passes.records (its options as data) beside the plugin. For a dialect, each `X.td` yields `X.h.inc`/`X.cpp.inc` for
# -gen-dialect-decls/-defs, -gen-op-decls/-defs (see the function below).
#
# Every plugin links TritonExt::Flags (compiler flags, include path, libtriton.so, --no-undefined
# so a missing symbol fails the build, not the load), libTritonExtPassInfra and the static
# libTritonExtRangeAnalysis (infra/include/triton-ext/RangeAnalysis.h), and gets the entry
# point `tritonGetPluginInfo` compiled in from infra/lib/PluginEntry.cpp.
#
# Results: target TritonExt<Name>; property TRITON_EXT_DIR on it (the extension's folder).

set(TRITON_EXT_PLUGIN_DIR "${CMAKE_BINARY_DIR}/plugins" CACHE PATH "Where plugin .so files go")
set(TRITON_EXT_GENERATED_DIR "${CMAKE_BINARY_DIR}/generated")

# One interface target holds what every plugin (and the infra) compiles and links with.
add_library(TritonExtFlags INTERFACE)
add_library(TritonExt::Flags ALIAS TritonExtFlags)
target_compile_features(TritonExtFlags INTERFACE cxx_std_20) # triton/Tools/Sys/GetEnv.h needs it
target_include_directories(TritonExtFlags SYSTEM INTERFACE ${TRITON_EXT_INCLUDE_DIRS})
# infra/include: PassInfra.h for C++, triton-ext/PassOptions.td for every Passes.td.
set(TRITON_EXT_INFRA_INCLUDE "${CMAKE_SOURCE_DIR}/infra/include")
target_include_directories(TritonExtFlags INTERFACE "${TRITON_EXT_INFRA_INCLUDE}")
# MLIR and libtriton are built without RTTI; hidden visibility keeps each plugin's TypeIDs and
# registration list private to it.
target_compile_options(TritonExtFlags INTERFACE -fno-rtti -fvisibility=hidden
                       -fvisibility-inlines-hidden -Wno-unused-parameter)
target_link_libraries(TritonExtFlags INTERFACE "${TRITON_EXT_LIBTRITON}")
target_link_options(TritonExtFlags INTERFACE "LINKER:--no-undefined")

# mlir-tblgen over one .td file. Output goes next to the target's other generated files.
function(triton_ext_tablegen target td generator output)
  get_filename_component(_td "${td}" ABSOLUTE)
  set(_out "${TRITON_EXT_GENERATED_DIR}/${target}/${output}")
  set(_incs "-I${TRITON_EXT_INFRA_INCLUDE}")
  foreach(_d IN LISTS TRITON_EXT_INCLUDE_DIRS)
    list(APPEND _incs "-I${_d}")
  endforeach()
  get_filename_component(_tddir "${_td}" DIRECTORY)
  string(REPLACE ";" " " _generator_text "${generator}")
  add_custom_command(
    OUTPUT "${_out}"
    COMMAND ${TRITON_EXT_MLIR_TBLGEN} ${generator} ${_incs} "-I${_tddir}" "${_td}" -o "${_out}"
    DEPENDS "${_td}" "${TRITON_EXT_INFRA_INCLUDE}/triton-ext/PassOptions.td"
    COMMENT "[${target}] mlir-tblgen ${_generator_text} ${td}"
    VERBATIM)
  set_property(TARGET ${target} APPEND PROPERTY TRITON_EXT_GENERATED "${_out}")
  target_sources(${target} PRIVATE "${_out}")
endfunction()

# The passes and options of one Passes.td as data, beside the plugin: mlir-tblgen --print-records
# writes every record with its fields resolved (shared option classes, EnumOption's values,
# RangeOption's bounds: infra/include/triton-ext/PassOptions.td) to
# ${TRITON_EXT_PLUGIN_DIR}/lib<Target>.passes.records. triton_ext reads option names, types,
# defaults, help and constraints from there and checks every value before anything compiles.
function(triton_ext_pass_records target td)
  get_filename_component(_td "${td}" ABSOLUTE)
  get_filename_component(_tddir "${_td}" DIRECTORY)
  set(_out "${TRITON_EXT_PLUGIN_DIR}/lib${target}.passes.records")
  set(_incs)
  foreach(_d IN LISTS TRITON_EXT_INCLUDE_DIRS)
    list(APPEND _incs "-I${_d}")
  endforeach()
  add_custom_command(
    OUTPUT "${_out}"
    COMMAND ${TRITON_EXT_MLIR_TBLGEN} --print-records ${_incs} "-I${TRITON_EXT_INFRA_INCLUDE}"
            "-I${_tddir}" "${_td}" -o "${_out}"
    DEPENDS "${_td}" "${TRITON_EXT_INFRA_INCLUDE}/triton-ext/PassOptions.td"
    COMMENT "[${target}] mlir-tblgen --print-records ${td}"
    VERBATIM)
  target_sources(${target} PRIVATE "${_out}")
endfunction()

function(_triton_ext_add_plugin kind name)
  cmake_parse_arguments(ARG "" "VERSION" "SOURCES;TD;DEPENDS" ${ARGN})
  # A broken extension must not stop the others from building: record the problem (the build
  # driver reports it and fails) and skip this one.
  set(_problem "")
  if(NOT ARG_SOURCES)
    set(_problem "SOURCES is empty; list the .cpp files of the extension")
  endif()
  foreach(_f IN LISTS ARG_SOURCES ARG_TD)
    if(NOT IS_ABSOLUTE "${_f}")
      set(_f "${CMAKE_CURRENT_SOURCE_DIR}/${_f}")
    endif()
    if(NOT EXISTS "${_f}")
      set(_problem "${_problem}source ${_f} does not exist; ")
    endif()
  endforeach()
  if(_problem)
    file(RELATIVE_PATH _rel "${CMAKE_SOURCE_DIR}" "${CMAKE_CURRENT_SOURCE_DIR}")
    message(WARNING "triton-ext: extension ${_rel} (triton_ext_add_${kind}(${name})) skipped: "
                    "${_problem}")
    file(APPEND "${CMAKE_BINARY_DIR}/broken-extensions.txt" "${_rel}\t${_problem}\n")
    return()
  endif()
  if(NOT ARG_VERSION)
    set(ARG_VERSION "${PROJECT_VERSION}")
  endif()
  set(target "TritonExt${name}")
  # The entry point is compiled once (TritonExtPluginEntry) and linked into every plugin; only
  # the plugin's name and version are compiled per plugin, from a generated one-line file.
  set(_identity "${TRITON_EXT_GENERATED_DIR}/${target}/PluginIdentity.cpp")
  file(CONFIGURE OUTPUT "${_identity}" CONTENT
    "// Generated by cmake/TritonExt.cmake: who this plugin is.\n\
#include \"triton-ext/PluginIdentity.h\"\n\
const char mlir::triton_ext::pluginName[] = \"${target}\";\n\
const char mlir::triton_ext::pluginVersion[] = \"${ARG_VERSION}\";\n")
  add_library(${target} SHARED ${ARG_SOURCES} "${_identity}"
              $<TARGET_OBJECTS:TritonExtPluginEntry>)
  set_target_properties(${target} PROPERTIES
    LIBRARY_OUTPUT_DIRECTORY "${TRITON_EXT_PLUGIN_DIR}"
    # libTritonExtPassInfra sits beside every plugin, in the build and in wheels.
    BUILD_RPATH "$ORIGIN" INSTALL_RPATH "$ORIGIN"
    TRITON_EXT_DIR "${CMAKE_CURRENT_SOURCE_DIR}"
    TRITON_EXT_KIND "${kind}")
  target_include_directories(${target} PRIVATE "${TRITON_EXT_GENERATED_DIR}/${target}"
                             "${CMAKE_CURRENT_SOURCE_DIR}")
  target_link_libraries(${target} PRIVATE TritonExt::Flags TritonExtPassInfra TritonExtRangeAnalysis)
  if(ARG_DEPENDS)
    add_dependencies(${target} ${ARG_DEPENDS})
  endif()
  foreach(_td IN LISTS ARG_TD)
    get_filename_component(_base "${_td}" NAME_WE)
    if(kind STREQUAL "pass" OR _base STREQUAL "Passes")
      triton_ext_tablegen(${target} "${_td}" "-gen-pass-decls;-name=${name}" "${_base}.h.inc")
      triton_ext_pass_records(${target} "${_td}")
    else()
      triton_ext_tablegen(${target} "${_td}" "-gen-dialect-decls" "${_base}Dialect.h.inc")
      triton_ext_tablegen(${target} "${_td}" "-gen-dialect-defs" "${_base}Dialect.cpp.inc")
      triton_ext_tablegen(${target} "${_td}" "-gen-op-decls" "${_base}Ops.h.inc")
      triton_ext_tablegen(${target} "${_td}" "-gen-op-defs" "${_base}Ops.cpp.inc")
    endif()
  endforeach()
  set_property(GLOBAL APPEND PROPERTY TRITON_EXT_PLUGINS ${target})
endfunction()

function(triton_ext_add_pass name)
  _triton_ext_add_plugin(pass ${name} ${ARGN})
endfunction()

function(triton_ext_add_dialect name)
  _triton_ext_add_plugin(dialect ${name} ${ARGN})
endfunction()

function(triton_ext_add_language name)
  _triton_ext_add_plugin(language ${name} ${ARGN})
endfunction()

file(REMOVE "${CMAKE_BINARY_DIR}/broken-extensions.txt")

# Adds every extension folder (one holding a CMakeLists.txt) under the standard roots.
function(triton_ext_add_extensions)
  set(_dirs)
  foreach(_pattern IN ITEMS passes/* backends/*/* dialects/* language/*)
    file(GLOB _found LIST_DIRECTORIES true "${CMAKE_SOURCE_DIR}/${_pattern}")
    foreach(_d IN LISTS _found)
      if(IS_DIRECTORY "${_d}" AND EXISTS "${_d}/CMakeLists.txt")
        list(APPEND _dirs "${_d}")
      endif()
    endforeach()
  endforeach()
  list(SORT _dirs)
  set(_only "${TRITON_EXT_ONLY}")
  foreach(_d IN LISTS _dirs)
    file(RELATIVE_PATH _rel "${CMAKE_SOURCE_DIR}" "${_d}")
    get_filename_component(_leaf "${_d}" NAME)
    if(_only AND NOT _leaf IN_LIST _only AND NOT _rel IN_LIST _only)
      continue()
    endif()
    message(STATUS "triton-ext: extension ${_rel}")
    add_subdirectory("${_d}" "${CMAKE_BINARY_DIR}/ext/${_rel}")
  endforeach()
endfunction()
