# Sources of the libraries tfprof builds itself (Abseil, protobuf): Debian 12's orig tarballs of
# the versions that release ships, downloaded once into TFPROF_DOWNLOAD_DIR, checked against
# their SHA-256 and unpacked into the build tree. A machine without network builds when that
# directory is brought along (it is git-ignored; scripts/install-deps.sh does not fill it).

set(TFPROF_DOWNLOAD_DIR "${PROJECT_SOURCE_DIR}/third_party/downloads"
  CACHE PATH "Where downloaded third-party sources are kept between builds")

# tfprof_third_party_source(<out_var> FILE <tarball name> URL <url> SHA256 <hash> TOP <top folder>
#                           [PATTERNS <paths inside the tarball to unpack>...])
# Sets <out_var> to the unpacked top folder under ${PROJECT_BINARY_DIR}/third_party.
function(tfprof_third_party_source out_var)
  cmake_parse_arguments(arg "" "FILE;URL;SHA256;TOP" "PATTERNS" ${ARGN})
  set(tarball "${TFPROF_DOWNLOAD_DIR}/${arg_FILE}")
  if(NOT EXISTS "${tarball}")
    message(STATUS "Downloading ${arg_URL}")
    file(DOWNLOAD "${arg_URL}" "${tarball}.part" EXPECTED_HASH SHA256=${arg_SHA256}
      STATUS download_status)
    list(GET download_status 0 download_code)
    if(NOT download_code EQUAL 0)
      file(REMOVE "${tarball}.part")
      message(FATAL_ERROR "Could not download ${arg_URL}: ${download_status}. Put ${arg_FILE} "
        "(sha256 ${arg_SHA256}) into ${TFPROF_DOWNLOAD_DIR}, for example from a machine that built "
        "tfprof before.")
    endif()
    file(RENAME "${tarball}.part" "${tarball}")
  endif()
  file(SHA256 "${tarball}" tarball_sha256)
  if(NOT tarball_sha256 STREQUAL arg_SHA256)
    message(FATAL_ERROR "${tarball} has sha256 ${tarball_sha256}, expected ${arg_SHA256}")
  endif()

  # A stamp names what was unpacked, so a tree unpacked with other patterns is unpacked again.
  set(source "${PROJECT_BINARY_DIR}/third_party/${arg_TOP}")
  string(SHA256 stamp_key "${arg_SHA256};${arg_PATTERNS}")
  string(SUBSTRING "${stamp_key}" 0 16 stamp_key)
  set(stamp "${source}/.tfprof-unpacked-${stamp_key}")
  if(NOT EXISTS "${stamp}")
    set(patterns)
    foreach(pattern IN LISTS arg_PATTERNS)
      list(APPEND patterns "${arg_TOP}/${pattern}")
    endforeach()
    if(patterns)
      file(ARCHIVE_EXTRACT INPUT "${tarball}" DESTINATION "${PROJECT_BINARY_DIR}/third_party"
        PATTERNS ${patterns})
    else()
      file(ARCHIVE_EXTRACT INPUT "${tarball}" DESTINATION "${PROJECT_BINARY_DIR}/third_party")
    endif()
    file(TOUCH "${stamp}")
  endif()
  set(${out_var} "${source}" PARENT_SCOPE)
endfunction()
