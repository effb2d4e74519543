# Protobuf for TensorFlow's formats: the lite runtime, built from the source of the release Debian 12
# ships (3.21.12) into a position-independent static library whose symbols stay hidden inside
# libtfprof.so, and a protoc of exactly that version to generate code for it.
#
# Why not link Debian's libprotobuf-lite.so: TensorFlow's libtensorflow_framework.so exports its own
# (newer) google::protobuf symbols into the global scope, and the dynamic linker then binds our
# calls into the shared protobuf runtime to TensorFlow's copy, which crashes. Debian's static
# libprotobuf-lite.a is not position-independent, so it cannot go into a shared library either.
#
# protoc: an installed protoc of the same version is used (Debian 12's protobuf-compiler); where
# there is none, or another version (generated code only compiles against its own runtime), or
# TFPROF_PROTOC_FROM_SOURCE is set, a protoc with the C++ generator alone is built from the same
# source (tools/protoc_cpp), so that `pip install .` works on any machine with a compiler.
#
# Sets TFPROF_PROTOBUF_INCLUDE (headers matching the runtime), TFPROF_PROTOC (the command to run)
# and the target tfprof_protobuf_lite.

set(TFPROF_PROTOBUF_VERSION 3.21.12)
set(TFPROF_PROTOBUF_SHA256 930c2c3b5ecc6c9c12615cf5ad93f1cd6e12d0aba862b572e076259970ac3a53)
set(TFPROF_PROTOBUF_URL
  "http://deb.debian.org/debian/pool/main/p/protobuf/protobuf_${TFPROF_PROTOBUF_VERSION}.orig.tar.gz"
  CACHE STRING "Where the protobuf source tarball (Debian's orig.tar.gz) is downloaded from")
option(TFPROF_PROTOC_FROM_SOURCE
  "Build protoc ${TFPROF_PROTOBUF_VERSION} from source even where an installed protoc matches" OFF)

tfprof_third_party_source(_source
  FILE protobuf_${TFPROF_PROTOBUF_VERSION}.orig.tar.gz
  URL "${TFPROF_PROTOBUF_URL}"
  SHA256 ${TFPROF_PROTOBUF_SHA256}
  TOP protobuf-${TFPROF_PROTOBUF_VERSION}
  PATTERNS "src/google/protobuf/*" "cmake/*.cmake")

# A source list as protobuf's own CMake build names it (cmake/<file>.cmake).
function(_tfprof_protobuf_sources out_var file)
  file(STRINGS "${_source}/cmake/${file}" lines REGEX "^ *\\\${protobuf_SOURCE_DIR}/src/.*\\.cc$")
  set(sources)
  foreach(line IN LISTS lines)
    string(STRIP "${line}" line)
    string(REPLACE "\${protobuf_SOURCE_DIR}" "${_source}" line "${line}")
    list(APPEND sources "${line}")
  endforeach()
  set(${out_var} ${sources} PARENT_SCOPE)
endfunction()

_tfprof_protobuf_sources(_lite_sources libprotobuf-lite.cmake)
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

# ---- protoc ----------------------------------------------------------------------------------------
find_program(TFPROF_SYSTEM_PROTOC protoc)
set(_protoc_why "")
if(TFPROF_PROTOC_FROM_SOURCE)
  set(_protoc_why "TFPROF_PROTOC_FROM_SOURCE is ON")
elseif(NOT TFPROF_SYSTEM_PROTOC)
  set(_protoc_why "no protoc is installed")
else()
  execute_process(COMMAND ${TFPROF_SYSTEM_PROTOC} --version OUTPUT_VARIABLE _protoc_version
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _protoc_status)
  if(NOT _protoc_status EQUAL 0 OR NOT _protoc_version STREQUAL "libprotoc ${TFPROF_PROTOBUF_VERSION}")
    set(_protoc_why "${TFPROF_SYSTEM_PROTOC} is '${_protoc_version}', not libprotoc ${TFPROF_PROTOBUF_VERSION}")
  endif()
endif()

if(_protoc_why STREQUAL "")
  set(TFPROF_PROTOC ${TFPROF_SYSTEM_PROTOC})
else()
  message(STATUS "tfprof: building protoc ${TFPROF_PROTOBUF_VERSION} from source (${_protoc_why})")
  _tfprof_protobuf_sources(_full_sources libprotobuf.cmake)
  _tfprof_protobuf_sources(_compiler_sources libprotoc.cmake)
  # Only the C++ generator: the other languages' generators are most of libprotoc.
  list(FILTER _compiler_sources EXCLUDE REGEX "/compiler/(csharp|java|objectivec|php|python|ruby)/")
  add_executable(tfprof_protoc EXCLUDE_FROM_ALL ${PROJECT_SOURCE_DIR}/tools/protoc_cpp/protoc_cpp.cc
    ${_lite_sources} ${_full_sources} ${_compiler_sources})
  target_include_directories(tfprof_protoc SYSTEM PRIVATE "${_source}/src")
  target_compile_definitions(tfprof_protoc PRIVATE HAVE_PTHREAD HAVE_ZLIB)
  # A build tool, never instrumented: a sanitizer build would otherwise run an instrumented protoc
  # whose deliberate exit-time leaks fail the build.
  target_compile_options(tfprof_protoc PRIVATE -w -fno-sanitize=all)
  target_link_options(tfprof_protoc PRIVATE -fno-sanitize=all)
  target_link_libraries(tfprof_protoc PRIVATE ZLIB::ZLIB Threads::Threads)
  # In a custom command, a target name runs the target's file and depends on it.
  set(TFPROF_PROTOC tfprof_protoc)
endif()
