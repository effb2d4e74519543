/* A C extension built by test_interop.py against the wheel's header and libtfprof.so: its spans
 * must land in the same session as the Python code that calls it. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <tfprof/tfprof.h>

static PyObject *run_op(PyObject *self, PyObject *args) {
  (void)self;
  (void)args;
  prof_span_begin("c_extension_op");
  prof_span_begin("c_extension_kernel");
  prof_span_end();
  prof_span_end();
  Py_RETURN_NONE;
}

static PyMethodDef methods[] = {{"run_op", run_op, METH_NOARGS, "Records two nested spans."},
                                {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "tfprof_test_c_extension", NULL, -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_tfprof_test_c_extension(void) { return PyModule_Create(&module); }
