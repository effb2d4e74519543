"""The preload library's functions (``tfprof run``, LD_PRELOAD), when it is in this process."""

from __future__ import annotations

import ctypes
from typing import Any, Optional


def function(name: str) -> Optional[Any]:
    """The preload library's exported C function `name` (no arguments), or None without it."""
    try:
        found = getattr(ctypes.CDLL(None), name)
    except (AttributeError, OSError):
        return None
    found.argtypes = []
    return found


def session_runs() -> bool:
    """Whether the preload library runs its session in this process (tfprof_preload_python_started
    also hands the signals back to it, which the start-up module has already done)."""
    started = function("tfprof_preload_python_started")
    return started is not None and started() == 1


def on_demand() -> bool:
    """Whether the preload library waits for `tfprof capture` here (tfprof run --on-demand) instead
    of running a session for the whole run."""
    listening = function("tfprof_preload_on_demand")
    return listening is not None and listening() == 1
