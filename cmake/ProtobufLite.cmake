# Protobuf's lite runtime, built from the source of the version Debian's protoc is, into a
# position-independent static library whose symbols stay hidden inside libtfprof.so.
#
# Why not link Debian's libprotobuf-lite.so: TensorFlow's libtensorflow_framework.so exports its own
# (newer) google::protobuf symbols into the global scope, and the dynamic linker then binds our
# calls into the shared protobuf runtime to TensorFlow's copy, which crashes. Debian's static
# libprotobuf-lite.a is not position-independent, so it cannot go into a shared library either.
#
# Sets TFPROF_PROTOBUF_INCLUDE (headers matching the runtime) and the target tfprof_protobuf_lite.

set(TFPROF_PROTOBUF_VERSION 3.21.12)
set(TFPROF_PROTOBUF_SHA256 930c2c3b5ecc6c9c12615cf5ad93f1cd6e12d0aba862b572e076259970ac3a53)
set(TFPROF_PROTOBUF_URL
  "http://deb.debian.org/debian/pool/main/p/protobuf/protobuf_${TFPROF_PROTOBUF_VERSION}.orig.tar.gz"
  CACHE STRING "Where the protobuf source tarball (Debian's orig.tar.gz) is downloaded from")
set(TFPROF_DOWNLOAD_DIR "${PROJECT_SOURCE_DIR}/third_party/downloads"
  CACHE PATH "Where downloaded third-party sources are kept between builds")

execute_process(COMMAND ${TFPROF_PROTOC} --version OUTPUT_VARIABLE _protoc_version
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _protoc_version STREQUAL "libprotoc ${TFPROF_PROTOBUF_VERSION}")
  message(FATAL_ERROR "tfprof needs protoc ${TFPROF_PROTOBUF_VERSION} (Debian 12's protobuf-compiler) "
    "to match the protobuf runtime it builds; ${TFPROF_PROTOC} says '${_protoc_version}'")
endif()

set(_tarball "${TFPROF_DOWNLOAD_DIR}/protobuf_${TFPROF_PROTOBUF_VERSION}.orig.tar.gz")
if(NOT EXISTS "${_tarball}")
  message(STATUS "Downloading ${TFPROF_PROTOBUF_URL}")
  file(DOWNLOAD "${TFPROF_PROTOBUF_URL}" "${_tarball}.part"
    EXPECTED_HASH SHA256=${TFPROF_PROTOBUF_SHA256} STATUS _download_status)
  list(GET _download_status 0 _download_code)
  if(NOT _download_code EQUAL 0)
    file(REMOVE "${_tarball}.part")
    message(FATAL_ERROR "Could not download ${TFPROF_PROTOBUF_URL}: ${_download_status}. "
      "Put protobuf_${TFPROF_PROTOBUF_VERSION}.orig.tar.gz (sha256 ${TFPROF_PROTOBUF_SHA256}) "
      "into ${TFPROF_DOWNLOAD_DIR} (scripts/install-deps.sh does).")
  endif()
  file(RENAME "${_tarball}.part" "${_tarball}")
endif()
file(SHA256 "${_tarball}" _tarball_sha256)
if(NOT _tarball_sha256 STREQUAL TFPROF_PROTOBUF_SHA256)
  message(FATAL_ERROR "${_tarball} has sha256 ${_tarball_sha256}, expected ${TFPROF_PROTOBUF_SHA256}")
endif()

set(_source "${PROJECT_BINARY_DIR}/third_party/protobuf-${TFPROF_PROTOBUF_VERSION}")
if(NOT EXISTS "${_source}/cmake/libprotobuf-lite.cmake")
  file(ARCHIVE_EXTRACT INPUT "${_tarball}" DESTINATION "${PROJECT_BINARY_DIR}/third_party"
    PATTERNS "protobuf-${TFPROF_PROTOBUF_VERSION}/src/google/protobuf/*"
             "protobuf-${TFPROF_PROTOBUF_VERSION}/cmake/libprotobuf-lite.cmake")
endif()

# The lite runtime's source list, as protobuf's own CMake build names it.
file(STRINGS "${_source}/cmake/libprotobuf-lite.cmake" _lines REGEX "^ *\\\${protobuf_SOURCE_DIR}/src/.*\\.cc$")
set(_lite_sources)
foreach(_line IN LISTS _lines)
  string(STRIP "${_line}" _line)
  string(REPLACE "\${protobuf_SOURCE_DIR}" "${_source}" _line "${_line}")
  list(APPEND _lite_sources "${_line}")
endforeach()

add_library(tfprof_protobuf_lite STATIC EXCLUDE_FROM_ALL ${_lite_sources})
target_include_directories(tfprof_protobuf_lite SYSTEM PUBLIC "${_source}/src")
target_compile_definitions(tfprof_protobuf_lite PRIVATE HAVE_PTHREAD)
target_compile_options(tfprof_protobuf_lite PRIVATE -w)
target_link_libraries(tfprof_protobuf_lite PUBLIC Threads::Threads)
set_target_properties(tfprof_protobuf_lite PROPERTIES
  POSITION_INDEPENDENT_CODE ON
  CXX_VISIBILITY_PRESET hidden
  VISIBILITY_INLINES_HIDDEN ON)
set(TFPROF_PROTOBUF_INCLUDE "${_source}/src")
