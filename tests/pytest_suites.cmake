# The pytest suites, one ctest each (label `pytest` and one per harness), so that `ctest -N` lists
# every suite. Each runs from the source root (pyproject.toml's pytest settings) with the
# interpreter its variable names: at test time from the environment, else from the CMake cache
# (tests/support/run_pytest.sh), and is skipped when none is given. scripts/test.sh builds the
# environments (scripts/python-env.sh, scripts/hta-env.sh) and passes their interpreters:
#   TFPROF_TEST_PYTHON      build/venv: tfprof installed with its test extras
#   TFPROF_TEST_PYTHON_TF   build/venv-tf: that, plus TensorFlow, TensorBoard, JAX and PyTorch
#   TFPROF_TEST_PYTHON_HTA  build/venv-hta: Holistic Trace Analysis (tfprof itself not installed)
#   TFPROF_TEST_PYTHON_XPROF build/venv-xprof: XProf, TensorBoard's Profile tab (the same)
set(TFPROF_TEST_PYTHON "" CACHE FILEPATH "Python with tfprof and pytest, for the pytest suites")
set(TFPROF_TEST_PYTHON_TF "" CACHE FILEPATH "Python with tfprof and TensorFlow, for tests/interop")
set(TFPROF_TEST_PYTHON_HTA "" CACHE FILEPATH
  "Python with Holistic Trace Analysis, for tests/interop_hta")
set(TFPROF_TEST_PYTHON_XPROF "" CACHE FILEPATH "Python with XProf, for tests/interop_xprof")

# tfprof_pytest(NAME <suite> PYTHON <variable> LABEL <harness> [BUILD_DIR] ARGS <pytest args>...)
# BUILD_DIR: the suite runs this tree's programs, found through TFPROF_BUILD_DIR.
function(tfprof_pytest)
  cmake_parse_arguments(SUITE "BUILD_DIR" "NAME;PYTHON;LABEL" "ARGS" ${ARGN})
  add_test(NAME pytest/${SUITE_NAME}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/support/run_pytest.sh ${SUITE_PYTHON}
            "${${SUITE_PYTHON}}" -q ${SUITE_ARGS}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(pytest/${SUITE_NAME} PROPERTIES LABELS "pytest;${SUITE_LABEL}"
    SKIP_RETURN_CODE 77 TIMEOUT 3600)
  if(SUITE_BUILD_DIR)
    set_tests_properties(pytest/${SUITE_NAME} PROPERTIES ENVIRONMENT
      "TFPROF_BUILD_DIR=${PROJECT_BINARY_DIR}")
  endif()
endfunction()

# The Python package (and the type stubs against it, and `tfprof run`).
tfprof_pytest(NAME python PYTHON TFPROF_TEST_PYTHON LABEL python ARGS tests/bindings/python)
# The tfprof command's file commands on trace files, the report in headless Chromium.
tfprof_pytest(NAME cli PYTHON TFPROF_TEST_PYTHON LABEL cli BUILD_DIR
  ARGS -p no:cacheprovider tests/tools/tfprof)
# Programs that know nothing of tfprof, under the preload library.
tfprof_pytest(NAME preload PYTHON TFPROF_TEST_PYTHON LABEL preload BUILD_DIR
  ARGS -p no:cacheprovider tests/bindings/preload)
# The GPU kit (scripts/gpu-kit.sh, in build/gpu-kit) as a bare GPU machine meets it, without a GPU.
tfprof_pytest(NAME gpu_kit PYTHON TFPROF_TEST_PYTHON LABEL kit BUILD_DIR
  ARGS -p no:cacheprovider tests/gpu/test_gpu_kit.py)
# The wheel's self-containedness and auditwheel's policy; protoc built from source.
tfprof_pytest(NAME packaging PYTHON TFPROF_TEST_PYTHON LABEL packaging BUILD_DIR
  ARGS -p no:cacheprovider tests/packaging)
# TensorFlow, TensorBoard, JAX and PyTorch against tfprof's files and tfprof run.
tfprof_pytest(NAME interop PYTHON TFPROF_TEST_PYTHON_TF LABEL interop
  ARGS -p no:cacheprovider tests/interop)
# TensorBoard reads what `tfprof convert` writes (skipped in TFPROF_TEST_PYTHON's environment).
tfprof_pytest(NAME interop_tensorboard PYTHON TFPROF_TEST_PYTHON_TF LABEL interop BUILD_DIR
  ARGS -p no:cacheprovider tests/tools/tfprof/test_convert.py -k tensorboard)
# Holistic Trace Analysis computes its breakdowns of tfprof's GPU traces.
tfprof_pytest(NAME interop_hta PYTHON TFPROF_TEST_PYTHON_HTA LABEL interop_hta BUILD_DIR
  ARGS -p no:cacheprovider tests/interop_hta)
# XProf (TensorBoard's Profile tab) reads the XPlane profiles tfprof writes, offline.
tfprof_pytest(NAME interop_xprof PYTHON TFPROF_TEST_PYTHON_XPROF LABEL interop_xprof BUILD_DIR
  ARGS -p no:cacheprovider tests/interop_xprof)
