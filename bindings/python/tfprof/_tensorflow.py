"""``tfprof.trace(..., tensorflow=True)``: TensorFlow's own profiler run beside the session, its
events folded into the session's trace on one clock.

TensorFlow's profiler (``tf.profiler.experimental.start/stop``) writes an XSpace
(``<dir>/plugins/profile/<run>/<host>.xplane.pb``) holding its TraceMe events: the ops, tf.data's
iterator events, the executor, the program's tf.function calls. At the end the session's trace and
that profile are merged with ``fold=on``: TensorFlow's threads join the session's process and its
steps count only where the program marked none with tfprof. Those steps are the program's step
markers (``tf.profiler.experimental.Trace("train", step_num=N, _r=1)``), else its tf.function calls
that returned: one per Keras batch, the first call's tracing and variable initialisation inside
the first step (runtime/formats/xplane/xplane_steps.h).

Only one tracer can take CUPTI's callbacks in a process. When tfprof's session traces the GPU,
TensorFlow's profiler is started without its GPU tracer; when tfprof's cannot (no CUPTI), and
TensorFlow sees a GPU, TensorFlow's records it. :attr:`TensorFlowCapture.note` says which.
"""

from __future__ import annotations

import glob
import importlib
import os
import shutil
import tempfile
import weakref
import warnings
from typing import Any, Optional

from tfprof._convert import fold


class TensorFlowCapture:
    def __init__(self) -> None:
        self._directory: Optional[str] = None  # removed by cleanup()
        self._tf: Any = None
        self.note: Optional[str] = None

    @staticmethod
    def check_installed() -> None:
        """ImportError with what to install when TensorFlow cannot be imported."""
        try:
            importlib.import_module("tensorflow")  # untyped: not imported by name for mypy
        except ImportError as error:
            raise ImportError(
                "tfprof.trace(tensorflow=True) records TensorFlow's own events and needs "
                f"TensorFlow, which cannot be imported here ({error}): pip install tensorflow "
                "(or tensorflow-cpu)"
            ) from error

    def start(self, gpu_state: str, remove_at_exit: bool = True, host_tracer_level: int = 2) -> None:
        """Starts TensorFlow's profiler; ``gpu_state`` is the tfprof session's ("active": it
        traces the GPU). ``host_tracer_level`` 1 records TensorFlow's expensive ops, its functions
        and tf.data's iterators; 2 every op. RuntimeError when TensorFlow's profiler will not
        start (one already runs)."""
        tf: Any = importlib.import_module("tensorflow")
        self._tf = tf
        self._directory = tempfile.mkdtemp(prefix="tfprof-tensorflow-")
        # Removed with this object at the latest (export() reads it again until then); at the
        # interpreter's exit too unless the owner removes it itself, later (Python runs these
        # removals before the exit handlers registered earlier than the first of them).
        # (setattr: typeshed's stubs for Python 3.9 give finalize __slots__ without its atexit
        # property, so mypy refuses the plain assignment there.)
        setattr(weakref.finalize(self, shutil.rmtree, self._directory, True), "atexit",
                remove_at_exit)
        device_tracer = 0
        if gpu_state == "active":
            self.note = ("the GPU is recorded by tfprof's CUPTI tracer (CUPTI takes one subscriber "
                         "per process); TensorFlow's profiler records host events only")
        elif tf.config.list_physical_devices("GPU"):
            device_tracer = 1
            self.note = (f"TensorFlow's profiler records the GPU: tfprof's GPU tracing is "
                         f"{gpu_state} in this session")
        options = tf.profiler.experimental.ProfilerOptions(
            host_tracer_level=host_tracer_level, python_tracer_level=0, device_tracer_level=device_tracer)
        try:
            tf.profiler.experimental.start(self._directory, options=options)
        except Exception as error:  # TensorFlow raises its own error types
            self.cleanup()
            raise RuntimeError(f"tfprof.trace: TensorFlow's profiler did not start: {error}") from error

    def stop(self) -> None:
        """Stops TensorFlow's profiler, which writes its profile. RuntimeError if it fails."""
        try:
            self._tf.profiler.experimental.stop()
        except Exception as error:  # noqa: BLE001
            raise RuntimeError(f"tfprof.trace: TensorFlow's profiler did not stop: {error}") from error

    @property
    def profile_directory(self) -> Optional[str]:
        """The directory TensorFlow's profile is in (None before it was started)."""
        return self._directory

    def has_profile(self) -> bool:
        """Whether TensorFlow's profiler wrote a profile into the directory."""
        directory = self.profile_directory
        return directory is not None and bool(
            glob.glob(os.path.join(directory, "plugins", "profile", "*", "*.xplane.pb")))

    def cleanup(self) -> None:
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None

    def write(self, export_session: Any, output: str) -> None:
        """Writes the session (through ``export_session(path)``) with TensorFlow's profile folded
        in to ``output``, in the format its name says."""
        directory = self.profile_directory
        assert directory is not None
        if not self.has_profile():
            # TensorFlow's profiler was stopped by someone else, or failed: nothing to fold in.
            warnings.warn("tfprof.trace: TensorFlow's profiler wrote no profile; the trace holds "
                          "tfprof's events only", RuntimeWarning, stacklevel=3)
            export_session(output)
            return
        session_file = os.path.join(directory, "session.json")
        export_session(session_file)
        fold("tfprof.trace", session_file, [directory], output)
        os.remove(session_file)

