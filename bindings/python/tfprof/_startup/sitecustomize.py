"""tfprof's start-up module for Python programs under ``tfprof run``.

``tfprof run`` puts this folder first on PYTHONPATH, so Python imports this file at start-up (after
it set up its own signal handling). It hands the signals back to the preload library (SIGINT stays
Python's KeyboardInterrupt), switches on the framework integrations (tfprof._autorun), takes its
folder off sys.path again, and runs the program's own sitecustomize, if there is one.
"""


def _tfprof_start() -> None:
    import ctypes
    import importlib.util
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != here]
    preload_session = False
    try:
        preload_session = ctypes.CDLL(None).tfprof_preload_python_started() == 1
    except (AttributeError, OSError):
        pass  # the preload library is not in this process (an interpreter that unset LD_PRELOAD)
    if preload_session and os.environ.get("TFPROF_FRAMEWORKS", "auto") not in ("off", ""):
        try:
            from tfprof import _autorun
        except ImportError as error:
            sys.stderr.write(f"tfprof: the tfprof package cannot be imported by {sys.executable} ({error}); "
                             "steps and layers of Python frameworks are not recorded (pip install tfprof)\n")
        else:
            _autorun.start(os.environ.get("TFPROF_FRAMEWORKS", "auto"))
    # The program's own sitecustomize, further down the path, runs as it would without tfprof.
    this_module = sys.modules.pop("sitecustomize")
    spec = importlib.util.find_spec("sitecustomize")
    if spec is None or spec.loader is None:
        sys.modules["sitecustomize"] = this_module
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


if __name__ == "sitecustomize":  # not when imported as tfprof._startup.sitecustomize (tools, tests)
    _tfprof_start()
