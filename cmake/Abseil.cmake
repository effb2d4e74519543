# Abseil, which the runtime and the tfprof command use (Status, StrCat, flat_hash_map).
#
# bundled (the default): built here from the source of the release Debian 12 ships (20220623.1),
# as static position-independent libraries with hidden symbols, and linked into libtfprof.so, the
# preload library and the tfprof command. Nothing tfprof installs then needs an Abseil shared
# library: the wheel and the GPU kit run on machines that have none (or another version, which
# TensorFlow and others load into the same process).
# system: the installed Abseil's CMake package (Debian's libabsl-dev), linked as shared libraries.
# Quicker to build; what tfprof installs then needs that Abseil at run time.
#
# Sets TFPROF_ABSL_LIBRARIES, the targets to link.

set(TFPROF_ABSEIL bundled CACHE STRING "Abseil to build with: bundled (from source, linked in) or system")
set_property(CACHE TFPROF_ABSEIL PROPERTY STRINGS bundled system)

if(TFPROF_ABSEIL STREQUAL "system")
  find_package(absl REQUIRED)
elseif(TFPROF_ABSEIL STREQUAL "bundled")
  tfprof_third_party_source(_abseil_source
    FILE abseil_20220623.1.orig.tar.gz
    URL "http://deb.debian.org/debian/pool/main/a/abseil/abseil_20220623.1.orig.tar.gz"
    SHA256 abfe2897f3a30edaa74bc34365afe3c2a3cd012091a97dc7e008f7016adcd5fe
    TOP abseil-20220623.1
    PATTERNS CMakeLists.txt "CMake/*" "absl/*")
  # A function scope, so that these settings reach Abseil's directory and nothing of ours.
  function(_tfprof_add_bundled_abseil source)
    set(CMAKE_POSITION_INDEPENDENT_CODE ON)
    set(CMAKE_CXX_VISIBILITY_PRESET hidden)
    set(CMAKE_VISIBILITY_INLINES_HIDDEN ON)
    set(ABSL_PROPAGATE_CXX_STD ON)
    set(ABSL_ENABLE_INSTALL OFF)
    set(BUILD_TESTING OFF)
    # SYSTEM: its headers are included as system headers, outside our -Werror warnings.
    add_subdirectory("${source}" "${PROJECT_BINARY_DIR}/third_party/abseil-build" EXCLUDE_FROM_ALL SYSTEM)
  endfunction()
  _tfprof_add_bundled_abseil("${_abseil_source}")
else()
  message(FATAL_ERROR "TFPROF_ABSEIL is '${TFPROF_ABSEIL}': it takes bundled or system")
endif()

set(TFPROF_ABSL_LIBRARIES
  absl::flat_hash_map absl::flat_hash_set absl::status absl::statusor absl::strings absl::str_format)
