"""What ``tfprof run`` switches on in a Python program (the start-up module in _startup/ calls
:func:`start`): the framework integrations, for the whole life of the preload library's session.

TFPROF_FRAMEWORKS chooses them ("auto", "off", or names such as "torch"); TFPROF_MODULE_DEPTH how
deep module spans go (default 3; 0: none); TFPROF_TENSORFLOW_PROFILER=off keeps TensorFlow's own
profiler off under Keras (no tf.data input waits then; default on); TFPROF_TORCH_OPS=on records
PyTorch's aten ops through torch.profiler (default off).

Under ``tfprof run --on-demand`` no session runs until ``tfprof capture`` starts one: the
integrations are installed all the same (they record only while a capture's session runs, and cost
a load and a test per hook otherwise), but the two that run a framework profiler for the whole
program and fold it into the trace at exit (TensorFlow's under Keras, TFPROF_TORCH_OPS) stay off:
there is no trace at exit to fold into.
"""

from __future__ import annotations

import os
import sys
from typing import NoReturn

from tfprof import _frameworks, _preload


def start(frameworks: str) -> None:
    # Before anything can fail: forked workers keep their traces whatever the frameworks.
    os.register_at_fork(after_in_child=_write_trace_before_os_exit)
    _start_frameworks(frameworks)


def _write_trace_before_os_exit() -> None:
    """In a forked child (multiprocessing's fork and forkserver workers, DataLoader workers), which
    ends with os._exit(): that skips the exit handlers that write the child's trace, so the trace
    is written first (on demand: a capture of the child in progress is ended and written)."""
    original = os._exit
    if getattr(original, "_tfprof_writes_trace", False):
        return  # a child of a child: already in place
    finish = _preload.function("tfprof_preload_finish")
    if finish is None:
        return

    def _exit(status: int) -> NoReturn:
        try:
            finish()
        except Exception:  # noqa: BLE001 - the program's exit comes first
            pass
        original(status)

    _exit._tfprof_writes_trace = True  # type: ignore[attr-defined]
    _exit.__wrapped__ = original  # type: ignore[attr-defined]
    os._exit = _exit


def _start_frameworks(frameworks: str) -> None:
    try:
        names = _frameworks.parse(frameworks)
        text = os.environ.get("TFPROF_MODULE_DEPTH", str(_frameworks.DEFAULT_MODULE_DEPTH))
        depth = int(text) if text.strip().isdigit() else -1
        if depth < 0:
            raise ValueError(f"TFPROF_MODULE_DEPTH={text!r} is not a whole number >= 0")
        profiler = os.environ.get("TFPROF_TENSORFLOW_PROFILER", "on")
        if profiler not in ("on", "off"):
            raise ValueError(f"TFPROF_TENSORFLOW_PROFILER={profiler!r} is not on or off")
        torch_ops = os.environ.get("TFPROF_TORCH_OPS", "off")
        if torch_ops not in ("on", "off"):
            raise ValueError(f"TFPROF_TORCH_OPS={torch_ops!r} is not on or off")
    except ValueError as error:
        sys.stderr.write(f"tfprof: {error}; Python frameworks are not recorded (the program runs on)\n")
        return
    # One line saying what is hooked, at the preload library's info level (its default).
    announce = os.environ.get("TFPROF_LOG_LEVEL", "info") in ("info", "debug")
    if _preload.on_demand():
        # Asked for by name: say why it does not run (TensorFlow's profiler is on by default).
        if torch_ops == "on" or os.environ.get("TFPROF_TENSORFLOW_PROFILER") == "on":
            asked = "TFPROF_TORCH_OPS=on" if torch_ops == "on" else "TFPROF_TENSORFLOW_PROFILER=on"
            sys.stderr.write(f"tfprof: {asked} is ignored with --on-demand: it folds a profile of the whole "
                             "run into the trace at exit, and captures write no trace at exit\n")
        profiler = torch_ops = "off"
    _frameworks.enable(_frameworks.Settings(frameworks=names, module_depth=depth, announce=announce,
                                            tensorflow_profiler=profiler == "on", torch_ops=torch_ops == "on"))
