# TritonExtToolchain.cmake: pick the compiler and MLIR/LLVM headers plugins build with.
#
# Included by the root CMakeLists.txt BEFORE project(), because it chooses the C++ compiler.
#
# Two sources, in this order:
#   -DMLIR_DIR=<prefix>/lib/cmake/mlir   An MLIR/LLVM install at Triton's exact LLVM pin. Its
#                                         headers and mlir-tblgen are used; the compiler is yours
#                                         (it must be clang: GCC breaks MLIR trait TypeIDs).
#   toolchain.json (default)             Written by `triton-ext toolchain` (Debian sid LLVM 23
#                                         headers, ABI override, mlir-tblgen wrapper, clang-19).
#                                         Found at -DTRITON_EXT_TOOLCHAIN_JSON=..., else
#                                         $TRITON_EXT_TOOLCHAIN_CACHE/toolchain/toolchain.json, else
#                                         ~/.cache/triton-ext/toolchain/toolchain.json.
#
# Sets (cache or normal variables):
#   TRITON_EXT_TRITON_DIR      the installed triton package folder
#   TRITON_EXT_LIBTRITON       path of triton/_C/libtriton.so (the only library plugins link)
#   TRITON_EXT_INCLUDE_DIRS    include path, in the order that matters (ABI override first)
#   TRITON_EXT_MLIR_TBLGEN     command (list) that runs mlir-tblgen
#   TRITON_EXT_TRITON_VERSION  e.g. 3.9.0

if(MLIR_DIR)
  find_package(MLIR REQUIRED CONFIG)
  if(NOT TRITON_EXT_TRITON_DIR)
    message(FATAL_ERROR "With -DMLIR_DIR also pass -DTRITON_EXT_TRITON_DIR=<site-packages>/triton")
  endif()
  set(TRITON_EXT_LIBTRITON "${TRITON_EXT_TRITON_DIR}/_C/libtriton.so")
  set(TRITON_EXT_INCLUDE_DIRS
      "${TRITON_EXT_TRITON_DIR}/include" "${TRITON_EXT_TRITON_DIR}/include/python/src"
      ${MLIR_INCLUDE_DIRS} ${LLVM_INCLUDE_DIRS})
  find_program(_tblgen mlir-tblgen HINTS "${LLVM_TOOLS_BINARY_DIR}" REQUIRED)
  set(TRITON_EXT_MLIR_TBLGEN "${_tblgen}")
  set(TRITON_EXT_TRITON_VERSION "3.9.0")
  message(STATUS "triton-ext: exact-match MLIR from ${MLIR_DIR}")
  return()
endif()

if(NOT TRITON_EXT_TOOLCHAIN_JSON)
  if(DEFINED ENV{TRITON_EXT_TOOLCHAIN_CACHE})
    set(TRITON_EXT_TOOLCHAIN_JSON "$ENV{TRITON_EXT_TOOLCHAIN_CACHE}/toolchain/toolchain.json")
  elseif(DEFINED ENV{XDG_CACHE_HOME})
    set(TRITON_EXT_TOOLCHAIN_JSON "$ENV{XDG_CACHE_HOME}/triton-ext/toolchain/toolchain.json")
  else()
    set(TRITON_EXT_TOOLCHAIN_JSON "$ENV{HOME}/.cache/triton-ext/toolchain/toolchain.json")
  endif()
endif()
if(NOT EXISTS "${TRITON_EXT_TOOLCHAIN_JSON}")
  message(FATAL_ERROR
    "triton-ext: no toolchain at ${TRITON_EXT_TOOLCHAIN_JSON}.\n"
    "Run `triton-ext toolchain` (or `python -m triton_ext toolchain`) first, or configure with "
    "-DMLIR_DIR=<LLVM at Triton's pin>/lib/cmake/mlir -DTRITON_EXT_TRITON_DIR=<triton package>.")
endif()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${TRITON_EXT_TOOLCHAIN_JSON}")
file(READ "${TRITON_EXT_TOOLCHAIN_JSON}" _tc)

macro(_triton_ext_json var key)
  string(JSON ${var} ERROR_VARIABLE _err GET "${_tc}" ${key})
  if(_err)
    message(FATAL_ERROR "triton-ext: ${TRITON_EXT_TOOLCHAIN_JSON} lacks '${key}' (${_err}); "
                        "re-run `triton-ext toolchain --force`")
  endif()
endmacro()
_triton_ext_json(_cxx cxx)
_triton_ext_json(TRITON_EXT_TRITON_VERSION triton_version)
_triton_ext_json(_override abi_override_include)
# The triton package to build against: the one of the Python that drives the build
# (`triton-ext build` passes -DTRITON_EXT_TRITON_DIR), else the one recorded by the toolchain.
if(NOT TRITON_EXT_TRITON_DIR)
  _triton_ext_json(TRITON_EXT_TRITON_DIR triton_dir)
endif()
set(TRITON_EXT_LIBTRITON "${TRITON_EXT_TRITON_DIR}/_C/libtriton.so")
set(_triton_inc "${TRITON_EXT_TRITON_DIR}/include")
_triton_ext_json(_mlir_inc mlir_include)
_triton_ext_json(_llvm_inc llvm_include)
_triton_ext_json(TRITON_EXT_MLIR_TBLGEN mlir_tblgen)

if(NOT CMAKE_CXX_COMPILER)
  set(CMAKE_CXX_COMPILER "${_cxx}")
endif()
# The override must come before Debian's headers: libtriton was built with ABI-breaking checks.
set(TRITON_EXT_INCLUDE_DIRS "${_override}" "${_triton_inc}" "${_triton_inc}/python/src"
    "${_mlir_inc}")
if(NOT _llvm_inc STREQUAL _mlir_inc)
  list(APPEND TRITON_EXT_INCLUDE_DIRS "${_llvm_inc}")
endif()
foreach(_p IN ITEMS "${TRITON_EXT_LIBTRITON}" "${_override}" "${_mlir_inc}")
  if(NOT EXISTS "${_p}")
    message(FATAL_ERROR "triton-ext: ${_p} (named in ${TRITON_EXT_TOOLCHAIN_JSON}) is missing; "
                        "re-run `triton-ext toolchain`")
  endif()
endforeach()
