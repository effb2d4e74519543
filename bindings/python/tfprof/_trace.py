"""``tfprof.trace``: one profiling session, as a context manager or with start()/stop()."""

from __future__ import annotations

import atexit
import dataclasses
import errno
import os
import re
import sys
import threading
import warnings
from types import TracebackType
from typing import List, Optional, Type, Union

from tfprof import _frameworks, _native, _preload
from tfprof._options import options_string, with_cupti_search
from tfprof._summary import Summary, summary_of_trace
from tfprof._tensorflow import TensorFlowCapture

PathArg = Union[str, "os.PathLike[str]"]


@dataclasses.dataclass(frozen=True)
class Stats:
    """A session's counters (``prof_stats_t``). ``events_recorded + events_dropped`` is exactly
    the number of events that reached the running session."""

    running: bool
    events_recorded: int
    events_dropped: int
    threads: int
    unmatched_span_ends: int
    unmatched_step_ends: int
    names_interned: int
    #: "off", "not built", "unavailable" or "active": whether CUPTI traced the GPU.
    gpu_state: str = "off"
    #: Kernels, copies, memsets and CUDA API calls collected so far.
    gpu_records: int = 0
    #: Records CUPTI dropped for lack of buffer space.
    gpu_records_dropped: int = 0
    #: Times CUPTI asked for a buffer while all were in use.
    gpu_buffers_refused: int = 0
    #: Records collected and then lost: no memory, or the spill file failed (disk full).
    events_memory_dropped: int = 0
    #: Records evicted on purpose: older than the ``keep=`` window.
    events_discarded: int = 0
    #: Bytes of collected records held in memory now (``max_memory_mb`` bounds it).
    memory_bytes: int = 0
    #: Bytes of collected records in the spill file now.
    spill_bytes: int = 0
    #: Dumps written by ``dump_on_slow_step``.
    slow_step_dumps: int = 0


# In prof_start()'s refusal while a `tfprof capture` of this process records.
_CAPTURE_RECORDS = "`tfprof capture` of this process"

# The Trace whose data the library holds (the running one, or the last one stopped), so that a
# Trace whose data a later session replaced can say so instead of exporting someone else's.
_lock = threading.Lock()
_latest: Optional["Trace"] = None


class Trace:
    """A profiling session. Create it with :func:`trace`.

    ``with tfprof.trace("out.json") as t:`` starts it on entry and stops it on exit, exporting to
    the path if one was given; ``t.start()`` / ``t.stop()`` do the same without a ``with`` block.
    After the session the data stays exportable with :meth:`export` until a new one starts.
    """

    def __init__(self, path: Optional[PathArg] = None, **options: object) -> None:
        if "output" in options:
            if path is not None:
                raise ValueError("tfprof.trace: give the output path once, either as path or as output=")
            path = options.pop("output")  # type: ignore[assignment]
        self._path = None if path is None else os.fspath(path)
        tensorflow = options.pop("tensorflow", False)
        if not isinstance(tensorflow, bool):
            raise TypeError(f"tfprof.trace: tensorflow={tensorflow!r} has type {type(tensorflow).__name__}; expected bool")
        # TensorFlow's profile is folded into the trace when it is written, so the library itself
        # writes no output then.
        self._tensorflow: Optional[TensorFlowCapture] = TensorFlowCapture() if tensorflow else None
        self._frameworks = _frameworks.parse(options.pop("frameworks", "off"))
        module_depth = options.pop("module_depth", _frameworks.DEFAULT_MODULE_DEPTH)
        if not isinstance(module_depth, int) or isinstance(module_depth, bool) or module_depth < 0:
            raise ValueError(f"tfprof.trace: module_depth={module_depth!r} is not an int >= 0")
        self._module_depth = module_depth
        # Set when `tfprof run` had started the session: this trace records into it and writes its
        # output from it, but neither starts nor stops it.
        self._joined = False
        if self._path is not None and self._tensorflow is None:
            options["output"] = self._path  # the library checks the format now, exports at stop
        self._options_given = any(key != "output" for key in options)
        self._options = options_string(with_cupti_search(options))
        self._state = "new"  # -> "running" -> "stopped"
        self._serial = 0  # the session's prof_session_active value, to tell it from later ones
        self._pid = 0  # the process that started it: a fork() child holds a copy of this object
        self._final_stats: Optional[Stats] = None

    @property
    def path(self) -> Optional[str]:
        """Where the trace is exported when the session stops (None: nowhere)."""
        return self._path

    @property
    def running(self) -> bool:
        return self._state == "running"

    def start(self) -> "Trace":
        """Starts the session, or joins the one ``tfprof run`` started.
        Raises RuntimeError if another tfprof.trace is running in this process (or a
        ``tfprof capture`` of it records: :func:`tfprof.listen`),
        ValueError for a bad option (the message lists the accepted ones) and OSError if the
        output path's directory does not exist."""
        global _latest
        if self._state != "new":
            raise RuntimeError("tfprof.trace: this trace was already started; create a new tfprof.trace() for a new session")
        if self._path is not None:
            _check_directory(self._path)
        if self._tensorflow is not None:
            self._tensorflow.check_installed()
        with _lock:
            try:
                self._serial = _native.start(os.fsencode(self._options))
            except ValueError as error:
                # The offsets in the library's message point into a string the user never wrote.
                raise ValueError("tfprof.trace: " + re.sub(r" at offset \d+", "", str(error))) from None
            except RuntimeError as error:
                if _latest is not None and _latest._state == "running":
                    raise RuntimeError(
                        "tfprof.trace: a trace is already running in this process (started "
                        f"{_latest._describe()}); stop it before starting another"
                    ) from error
                if _CAPTURE_RECORDS in str(error):
                    # tfprof.listen()'s process: `tfprof capture PID` records some steps right now.
                    raise RuntimeError(
                        f"tfprof.trace: cannot start: {error}; start the trace after it, or stop "
                        "listening for captures (tfprof.unlisten(), which ends it)"
                    ) from error
                if not _native.is_running() or not _preload.session_runs():
                    raise RuntimeError(
                        f"tfprof.trace: {error} (started outside tfprof.trace, for example by C code "
                        "through prof_start)"
                    ) from error
                self._join_running_session()
            self._state = "running"
            self._pid = os.getpid()
            _latest = self
        if self._frameworks and not self._joined:
            _frameworks.enable(_frameworks.Settings(frameworks=self._frameworks, module_depth=self._module_depth))
        if self._tensorflow is not None:
            try:
                self._tensorflow.start(self._require_own_stats("start").gpu_state)
            except BaseException:
                self._state = "stopped"
                self._end_session("")
                raise
        return self

    def _join_running_session(self) -> None:
        """Records into the session `tfprof run`'s preload library started instead of failing:
        one line says so."""
        self._joined = True
        self._serial = _native.session_serial()
        who = "`tfprof run`"
        where = f"; {self._path!r} is written from it when this trace stops" if self._path else ""
        ignored = " (this trace's options are not applied)" if self._options_given else ""
        sys.stderr.write(f"tfprof.trace: joining the session {who} started{where}{ignored}\n")

    def _end_session(self, path: str) -> None:
        """Stops the session and writes `path` ("" for nowhere); a joined session goes on running
        and only `path` is written from it."""
        if self._frameworks and not self._joined:
            _frameworks.disable()
        if not self._joined:
            _native.stop(path)
        elif path:
            _native.export(os.fsencode(path))

    @property
    def notes(self) -> List[str]:
        """What the session wants its user to know beyond its figures: with ``tensorflow=True``,
        which profiler records the GPU and why."""
        return [] if self._tensorflow is None or self._tensorflow.note is None else [self._tensorflow.note]

    def stop(self) -> None:
        """Stops the session and, if a path was given, exports to it. If that export fails the
        session is stopped anyway, OSError names the path, and :meth:`export` can still write
        the data elsewhere."""
        with _lock:
            if self._state != "running":
                raise RuntimeError(f"tfprof.trace: cannot stop a trace that is {self._state_text()}")
            self._state = "stopped"
            if self._in_forked_child():
                # The session runs on in the parent, which writes it; this process (a fork()
                # child leaving the parent's `with` block) has nothing of it to stop or export.
                return
            if _native.session_serial() == self._serial:
                if self._tensorflow is not None:
                    self._stop_with_tensorflow()
                    return
                try:
                    self._end_session(self._path or "")
                finally:
                    self._final_stats = self._own_stats()
                return
            # Someone else (C code calling prof_stop) stopped this session already; the library
            # exported it to `path` then. Its figures are still readable unless a later session
            # replaced them.
            self._final_stats = self._own_stats()
            if self._final_stats is None:
                raise RuntimeError(
                    "tfprof.trace: this trace's session was stopped outside tfprof.trace and a later "
                    "session replaced its data"
                )

    def export(self, path: PathArg) -> None:
        """Writes what was collected to ``path``, the format following the path: ``.json``,
        ``.json.gz``, ``.pb`` (a TensorFlow RunMetadata), ``.tfrecord`` (one RunMetadata per
        step), ``.pftrace`` (Perfetto's protobuf trace), ``.xplane.pb`` (an XPlane profile, what
        TensorBoard's Profile tab reads) or a directory (existing, or a str ending in ``/``) for a
        TensorBoard event file and, beside it, the XPlane profile
        (``plugins/profile/<run>/<host>.xplane.pb``; option ``tensorboard_profile="off"``: none).
        Works while running (what was collected so far) and after
        stopping. Raises OSError naming the path if it cannot be written (nothing is lost: try
        another path), ValueError for an unsupported extension."""
        self._require_own_stats("export")
        if self._tensorflow is not None and self._state == "stopped":
            self._tensorflow.write(lambda session: _native.export(os.fsencode(session)), os.fspath(path))
            return
        _native.export(os.fsencode(path))

    def _stop_with_tensorflow(self) -> None:
        """Stops TensorFlow's profiler, then the session, then writes both into the path."""
        assert self._tensorflow is not None
        try:
            self._tensorflow.stop()
        except RuntimeError as error:
            # Stopped already (by the program itself, which then wrote its profile where it was
            # started), or failed: tfprof's own data is written all the same.
            warnings.warn(f"{error}; writing what was recorded", RuntimeWarning, stacklevel=3)
        finally:
            try:
                self._end_session("")
            finally:
                self._final_stats = self._own_stats()
        if self._path is not None:
            self.export(self._path)

    def summary(self) -> "Summary":
        """The figures of ``tfprof summary`` for this trace (:func:`tfprof.summarize`): of the file
        written at stop, or, for a trace written nowhere, of a temporary export. Raises
        RuntimeError while the trace runs (stop it first, or summarize an ``export()``ed file)
        and for a trace never started."""
        if self._state == "running":
            raise RuntimeError("tfprof.trace: cannot summarize a trace that is running; stop it first "
                               "(or export() it and call tfprof.summarize on the file)")
        if self._state == "new":
            raise RuntimeError("tfprof.trace: cannot summarize a trace that was never started")
        if self._path is not None and os.path.exists(self._path):
            return summary_of_trace(self._path, self.export)
        self._require_own_stats("summarize")
        return summary_of_trace(None, self.export)

    @property
    def stats(self) -> Stats:
        """Events recorded and dropped so far (while running) or in the whole session (after)."""
        if self._state == "stopped" and self._final_stats is not None:
            return self._final_stats
        return self._require_own_stats("read the stats of")

    def __enter__(self) -> "Trace":
        return self.start()

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None:
        if self._state != "running":
            return  # stopped inside the block
        if exc is None:
            self.stop()
            return
        # Never let a failed export (or any failure to stop) replace the exception that ended the
        # block.
        try:
            self.stop()
        except Exception as error:  # noqa: BLE001 - reported as a warning instead
            text = str(error)
            prefix = "" if text.startswith("tfprof.trace: ") else "tfprof.trace: "
            warnings.warn(f"{prefix}{text}; call export() to write the data elsewhere", RuntimeWarning, stacklevel=2)

    def __repr__(self) -> str:
        return f"<tfprof.Trace {self._state_text()}{'' if self._path is None else ' -> ' + repr(self._path)}>"

    def _require_own_stats(self, action: str) -> Stats:
        """This trace's session's statistics; RuntimeError saying why `action` is impossible if
        the library holds no data of this trace."""
        if self._state == "new":
            raise RuntimeError(f"tfprof.trace: cannot {action} a trace that was never started")
        if self._in_forked_child():
            raise RuntimeError(
                f"tfprof.trace: cannot {action} this trace here: its session belongs to process "
                f"{self._pid}, of which this process is a fork() child; do it in that process"
            )
        stats = self._own_stats()
        if stats is None:
            raise RuntimeError(
                f"tfprof.trace: cannot {action} this trace: a later session replaced its data"
            )
        return stats

    def _in_forked_child(self) -> bool:
        return self._pid != 0 and os.getpid() != self._pid

    def _own_stats(self) -> Optional[Stats]:
        """The library's statistics if they are this trace's session's, else None."""
        try:
            raw = _native.stats()
        except RuntimeError:  # no session has run
            return None
        if raw.pop("session_serial") != self._serial:
            return None
        return Stats(**raw)

    def _state_text(self) -> str:
        return {"new": "not started", "running": "running", "stopped": "stopped"}[self._state]

    def _describe(self) -> str:
        return "with no output path" if self._path is None else f"for {self._path!r}"


def trace(path: Optional[PathArg] = None, **options: object) -> Trace:
    """A profiling session: ``with tfprof.trace("trace.json"): ...``.

    ``path`` is where the trace is exported when the session ends (format by extension:
    ``.json`` or ``.json.gz``); without it, call ``export()`` on the returned :class:`Trace`.
    ``options`` are the C library's options: ``buffer_events`` (per-thread ring size in
    events), ``flush_interval_ms``, ``clock`` (``"auto"``, ``"tsc"`` or ``"monotonic"``),
    ``max_memory_mb`` (collected data held in memory before it spills to a file in ``$TMPDIR``;
    default 48), ``keep`` (``"all"``, ``"last:N"`` steps or ``"last:Ns"`` seconds: the flight
    recorder), ``dump_on_slow_step`` (a factor: write the kept window when a step takes that many
    times the median step; needs a path), ``tensorboard_profile`` (``"off"``: a log directory
    output gets no XPlane profile for TensorBoard's Profile tab), and for GPU tracing ``cuda`` (``"auto"``, ``"on"`` or ``"off"``), ``cupti_path``,
    ``cupti_buffer_kb``, ``cupti_buffers``, ``cuda_sync``, ``cuda_queries`` and ``gpu_wait_ms``
    (docs/gpu.md).
    A libcupti from the ``nvidia-cuda-cupti`` pip package on ``sys.path`` is found automatically.

    ``tensorflow=True`` also runs TensorFlow's own profiler for the session and folds its events
    (ops, tf.data's iterator events, Keras' steps) into the trace on the same clock, the
    program's own spans and steps beside them; ImportError when TensorFlow is not installed.
    Only one of the two records the GPU (CUPTI takes one subscriber): tfprof's when it can, else
    TensorFlow's; :attr:`Trace.notes` says which.

    ``frameworks="auto"`` (or names: ``"torch"``, ``"keras"``, ``"jax"``) records what the
    frameworks do without annotations for the length of the session. PyTorch: a step per optimizer
    step, DataLoader waits as input waits, module forward passes down to ``module_depth`` (default
    3), backward passes, optimizer steps and ``record_function`` ranges (docs/pytorch.md). Keras:
    a step per batch of fit, evaluate and predict, labelled by a ``train_function`` (or
    ``test_function``, ``predict_function``) span; add ``tensorflow=True`` for tf.data's input
    waits. JAX: ``StepTraceAnnotation`` as steps, ``TraceAnnotation`` as spans (docs/keras.md).
    Default ``"off"``; ``tfprof run`` switches it on for the whole program.

    Under ``tfprof run`` a session already runs: the trace joins it, says so in one line on
    stderr, and writes ``path`` from it when it stops, without stopping it; its own options are
    not applied.

    In a process that listens for captures (:func:`tfprof.listen`), starting a trace while a
    ``tfprof capture`` records raises RuntimeError naming the capture (it ends by itself after
    its steps or seconds); while the trace runs, captures are refused.
    """
    return Trace(path, **options)


def _check_directory(path: str) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(
            errno.ENOENT, f"tfprof.trace: cannot write the trace there: the directory {directory!r} does not exist", path
        )


@atexit.register
def _stop_at_exit() -> None:
    # A trace started with start() and never stopped still gets written at interpreter exit.
    trace_to_stop = _latest
    if trace_to_stop is not None and trace_to_stop._state == "running":
        try:
            trace_to_stop.stop()
        except Exception as error:  # noqa: BLE001 - report, never fail the interpreter's exit
            warnings.warn(f"tfprof: stopping the trace at exit failed: {error}", RuntimeWarning)
