"""PyTorch's aten ops under `tfprof run`, opt-in (TFPROF_TORCH_OPS=on): torch.profiler's CPU
activity runs for the program's life, paused while the program runs a torch.profiler of its own,
and what it recorded is folded into tfprof run's trace at exit (the ops join the threads that ran
them, inside tfprof's steps and module spans). CPU activity only: CUPTI stays tfprof's.

torch.profiler holds what it records in memory until it stops, and costs several times a small
step (docs/pytorch.md): it is for short runs that need the op level."""

from __future__ import annotations

import atexit
import os
import sys
import tempfile
import threading
from typing import Any, List, Optional


class TorchOps:
    def __init__(self, torch: Any, announce: bool) -> None:
        self._torch = torch
        self._announce = announce
        self._lock = threading.RLock()
        self._profile: Optional[Any] = None  # ours while it runs
        self._exports: List[str] = []  # one Chrome trace per stretch it ran
        self._directory = tempfile.mkdtemp(prefix="tfprof-torch-ops-")
        self._stopped_for_good = False
        self._exit_registered = False
        self._tried = False
        self._program_profiles = 0  # the program's own torch.profiler sessions running now

    def owns(self, profile: Any) -> bool:
        return profile is not None and profile is self._profile

    @property
    def started(self) -> bool:
        """Whether it was ever started (or tried to)."""
        return self._tried

    @property
    def running(self) -> bool:
        return self._profile is not None

    def program_started(self) -> None:
        """The program starts a torch.profiler of its own: one runs at a time, so ours pauses."""
        with self._lock:
            self._program_profiles += 1
            self.pause()

    def program_stopped(self) -> None:
        with self._lock:
            self._program_profiles = max(0, self._program_profiles - 1)
            if self._tried:
                self.resume()

    def resume(self) -> None:
        with self._lock:
            if self._profile is not None or self._stopped_for_good or self._program_profiles > 0:
                return
            self._tried = True
            profiler = self._torch.profiler
            profile = profiler.profile(activities=[profiler.ProfilerActivity.CPU])
            self._profile = profile  # before start(): the start hook must see it is ours
            try:
                profile.start()
            except Exception as error:  # noqa: BLE001 - another profiler holds the op hooks
                self._profile = None
                sys.stderr.write(f"tfprof: torch.profiler did not start ({error}); aten ops are not recorded\n")
                return
            if not self._exit_registered:
                # After torch.profiler's first start, which registers exit handlers of its own
                # that tear it down: this one, registered later, runs before them.
                self._exit_registered = True
                atexit.register(self._fold_at_exit)

    def pause(self) -> None:
        with self._lock:
            profile = self._profile
            if profile is None:
                return
            try:
                profile.stop()  # still ours here: the stop hook lets it through
                path = os.path.join(self._directory, f"ops-{len(self._exports)}.json")
                profile.export_chrome_trace(path)
                self._exports.append(path)
            except Exception as error:  # noqa: BLE001 - report, never fail the program
                sys.stderr.write(f"tfprof: torch.profiler's ops could not be kept ({error})\n")
            finally:
                self._profile = None

    def _fold_at_exit(self) -> None:
        from tfprof._frameworks._fold_at_exit import finish_and_fold

        with self._lock:
            self.pause()
            self._stopped_for_good = True
            try:
                finish_and_fold(self._exports, "torch.profiler's aten ops", self._announce)
            finally:
                for path in self._exports:
                    if os.path.exists(path):
                        os.remove(path)
                os.rmdir(self._directory)
