"""The steps a framework integration marks: numbered from 0 on the thread that trains, and
yielding to the program's own steps (tfprof.step, or NVTX step markers seen by the preload
library under tfprof run) from the moment it marks any.

``source`` says who marks steps now: the integration's default (its name, such as "optimizer"),
another of the framework's own markers (torch.profiler's "profiler"), or "program": then nothing
here marks any.
"""

from __future__ import annotations

import ctypes
import threading

from tfprof import _native, _preload

PROGRAM = "program"


class StepMarks:
    def __init__(self, source: str) -> None:
        self._lock = threading.Lock()
        self.number = 0
        self.open = False
        self.source = source
        # The preload library's count of steps its NVTX step markers opened (None: no preload).
        self._nvtx_steps_marked = _preload.function("tfprof_preload_marked_steps")
        if self._nvtx_steps_marked is not None:
            self._nvtx_steps_marked.restype = ctypes.c_uint64

    def begin_if_none(self) -> bool:
        """Opens the next step unless one is open or the program marks its own; True if opened."""
        if self.open or self.source == PROGRAM or self.nvtx_took_over():
            return False
        with self._lock:
            if self.open or self.source == PROGRAM:
                return False
            self.open = True
            _native.begin_step(self.number)
            return True

    def end(self) -> bool:
        """Ends the open step; True if one was open."""
        with self._lock:
            if not self.open:
                return False
            self.open = False
            self.number += 1
            _native.end_step()
            return True

    def cancel(self) -> None:
        """Withdraws the open step (its fetch found the data exhausted): no step, number unused."""
        with self._lock:
            if self.open:
                self.open = False
                _native.cancel_step()

    def renumber(self, number: int, source: str) -> None:
        """Another of the framework's markers takes over, numbering from `number`."""
        if self.source == PROGRAM:
            return
        self.end()
        with self._lock:
            self.source = source
            self.number = number

    def program_marked(self) -> None:
        """The program marks steps itself (tfprof.step): nothing here marks any more."""
        if self.source != PROGRAM:
            self.end()
            self.source = PROGRAM

    def nvtx_took_over(self) -> bool:
        """Whether the program's NVTX ranges have begun marking steps (through the preload
        library, under tfprof run): from then on they alone do. Their first step's begin already
        ended any step open here, on this thread."""
        if self._nvtx_steps_marked is None or self._nvtx_steps_marked() == 0:
            return False
        with self._lock:
            self.source = PROGRAM
            self.open = False
        return True
