"""tfprof: a low-overhead profiler runtime for ML programs.

::

    import tfprof

    with tfprof.trace("trace.json"):
        for n in range(steps):
            with tfprof.step(n):
                with tfprof.span("forward"):
                    ...

Python shares one runtime and one session with C code in the same process: the extension calls
the C ABI of the ``libtfprof.so`` shipped next to it (:func:`library_path`), which C extensions,
``ctypes`` and the preload library use as well.

A long job can also wait to be recorded on demand: :func:`listen`, then ``tfprof capture PID``
from a shell records a few whole steps whenever asked.
"""

from __future__ import annotations

import os

from tfprof import _decorate, _native
from tfprof._capture import is_listening, listen, unlisten
from tfprof._convert import convert, merge
from tfprof._native import counter, instant, set_thread_name, span
from tfprof._step import step
from tfprof._summary import Device, Finding, Kernel, Op, Record, Step, Summary, Table, summarize
from tfprof._trace import Stats, Trace, trace

__version__: str = _native.version()

__all__ = [
    "Device",
    "Finding",
    "Kernel",
    "Op",
    "Record",
    "Stats",
    "Step",
    "Summary",
    "Table",
    "Trace",
    "__version__",
    "convert",
    "counter",
    "get_include",
    "instant",
    "is_listening",
    "is_running",
    "library_path",
    "listen",
    "merge",
    "set_thread_name",
    "span",
    "step",
    "summarize",
    "trace",
    "unlisten",
]


def is_running() -> bool:
    """True while a profiling session runs in this process, whoever started it."""
    return _native.is_running()


def library_path() -> str:
    """The ``libtfprof.so`` this process uses. Load it with ``ctypes`` (or link C extensions to
    it) and calls land in the same session as Python's."""
    return _native.library_path()


def get_include() -> str:
    """The directory holding ``tfprof/tfprof.h``, for building C extensions against the wheel."""
    return os.path.join(os.path.dirname(__file__), "include")


_decorate.install()
