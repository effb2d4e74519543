# Installs the built tfprof into a scratch prefix, then builds and runs a consumer program against
# it twice: through find_package(tfprof) and through pkg-config. Each run must export a trace
# holding the consumer's span.
# Usage: cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -P run_consumer_test.cmake
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "failed (${result}): ${ARGN}\n${out}\n${err}")
  endif()
endfunction()

function(check_trace path)
  file(READ ${path} text)
  string(FIND "${text}" "\"name\":\"consumer_op\"" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "${path} lacks the consumer's span")
  endif()
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# 1. CMake: find_package(tfprof) from the installed package.
run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/cmake_build -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_BUILD_RPATH=${prefix}/lib)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/cmake_build)
run(${WORK_DIR}/cmake_build/consumer ${WORK_DIR}/cmake_trace.json)
check_trace(${WORK_DIR}/cmake_trace.json)

# 2. pkg-config.
find_program(PKG_CONFIG pkg-config REQUIRED)
find_program(CC NAMES cc gcc REQUIRED)
file(GLOB_RECURSE pc_files ${prefix}/*/tfprof.pc)
list(GET pc_files 0 pc_file)
get_filename_component(pc_dir ${pc_file} DIRECTORY)
execute_process(COMMAND ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${pc_dir} ${PKG_CONFIG} --cflags --libs tfprof
  OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "pkg-config does not know tfprof")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
get_filename_component(lib_dir ${pc_dir} DIRECTORY)
run(${CC} ${SOURCE_DIR}/consumer.c ${flags} -Wl,-rpath,${lib_dir} -o ${WORK_DIR}/consumer_pc)
run(${WORK_DIR}/consumer_pc ${WORK_DIR}/pkgconfig_trace.json)
check_trace(${WORK_DIR}/pkgconfig_trace.json)
message(STATUS "consumer built with find_package and with pkg-config; both exported traces")
