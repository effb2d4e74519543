# Fails unless every dynamic symbol that libtfprof.so defines is a prof_* entry point (plus the
# symbol-version node), and the fixed C ABI functions are all there.
# Usage: cmake -DLIBRARY=path/to/libtfprof.so -P check_exports.cmake
cmake_policy(SET CMP0057 NEW)  # if(IN_LIST)
find_program(NM nm REQUIRED)
execute_process(COMMAND ${NM} -D --defined-only ${LIBRARY} OUTPUT_VARIABLE symbols RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "nm -D failed on ${LIBRARY}")
endif()
string(REPLACE "\n" ";" lines "${symbols}")
set(exported "")
foreach(line IN LISTS lines)
  if(line STREQUAL "")
    continue()
  endif()
  string(REGEX MATCH "[^ ]+$" name "${line}")
  string(REGEX REPLACE "@.*" "" name "${name}")
  if(name MATCHES "^TFPROF_[0-9]+$")
    continue()
  endif()
  if(NOT name MATCHES "^prof_")
    message(FATAL_ERROR "libtfprof.so exports '${name}', which is not a prof_* symbol")
  endif()
  list(APPEND exported ${name})
endforeach()
foreach(required prof_start prof_stop prof_export prof_begin_step prof_end_step prof_cancel_step prof_span_begin
                 prof_span_end prof_instant prof_counter prof_set_thread_name prof_get_stats
                 prof_strerror prof_last_error prof_version prof_version_string prof_is_running
                 prof_session_active prof_convert prof_merge prof_range_start prof_range_end
                 prof_register_name prof_span_begin_id)
  if(NOT required IN_LIST exported)
    message(FATAL_ERROR "libtfprof.so does not export ${required}")
  endif()
endforeach()
list(LENGTH exported count)
message(STATUS "libtfprof.so exports ${count} symbols, all prof_*")
