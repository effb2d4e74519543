"""Keras 3, through its callback machinery (``keras.callbacks.CallbackList``, which every
``fit``, ``evaluate`` and ``predict`` calls on the thread that runs them): a step per batch, the
batch's compiled function call as a span named after it (``train_function``, ``test_function``,
``predict_function``: the label that tells training, validation and prediction steps apart).

The step opens when Keras asks for a batch and ends when the batch's callbacks have run. A batch
that turns out not to exist (a dataset of unknown size ends each first epoch on a fetch that
finds it exhausted) never reaches its end: its step is withdrawn (prof_cancel_step) at the next
thing Keras does, so the count is the batches run. Keras' model building and variable
initialisation happen before the first batch and are no step.

On the TensorFlow backend the batch's input fetch runs inside TensorFlow's compiled function,
out of Python's sight: with ``Settings.tensorflow_profiler`` (``tfprof run``) TensorFlow's own
profiler runs from the first batch on, and its events (tf.data's iterator, the ops, named by
layer) are folded into the trace when the program exits: the input wait of each step is then in
the summary. A program that starts TensorFlow's profiler itself (Keras' TensorBoard callback with
``profile_batch``) gets it: tfprof's pauses meanwhile and resumes after.
"""

from __future__ import annotations

import atexit
import importlib
import sys
import threading
from typing import Any, Callable, List, Optional, Tuple

from tfprof import _native
from tfprof._frameworks import NO_SPAN, Integration, Settings, program_steps_listeners
from tfprof._frameworks._steps import StepMarks

PHASES = ("train", "test", "predict")


class KerasIntegration(Integration):
    def __init__(self) -> None:
        self._patches: List[Tuple[object, str, object]] = []
        self._steps = StepMarks("keras")
        self._local = threading.local()
        self._profiler: Optional[_TensorFlowProfiler] = None

    def install(self, keras: Any, settings: Settings) -> None:
        callback_list = importlib.import_module("keras.callbacks").CallbackList
        for phase in PHASES:
            self._wrap(callback_list, f"on_{phase}_batch_begin", self._batch_begin(phase))
            self._wrap(callback_list, f"on_{phase}_batch_end", self._batch_end)
            for event in ("begin", "end"):
                self._wrap(callback_list, f"on_{phase}_{event}", self._boundary(phase if event == "begin" else None))
        self._wrap(callback_list, "on_epoch_end", self._boundary(None))
        program_steps_listeners.append(self._steps.program_marked)
        if settings.tensorflow_profiler and _backend(keras) == "tensorflow":
            self._profiler = _TensorFlowProfiler(settings.announce)

    def uninstall(self) -> None:
        for owner, attribute, original in reversed(self._patches):
            setattr(owner, attribute, original)
        self._patches.clear()
        if self._steps.program_marked in program_steps_listeners:
            program_steps_listeners.remove(self._steps.program_marked)
        stack = self._batches()
        while stack:
            batch = stack.pop()
            self._close(batch, cancel=not batch[2])
        if self._profiler is not None:
            self._profiler.uninstall()

    def _wrap(self, owner: object, attribute: str, make: Callable[[Any], Any]) -> None:
        original = getattr(owner, attribute)
        replacement = make(original)
        replacement.__wrapped__ = original
        replacement.__name__ = getattr(original, "__name__", attribute)
        replacement.__doc__ = getattr(original, "__doc__", None)
        self._patches.append((owner, attribute, original))
        setattr(owner, attribute, replacement)

    # The batches open on this thread, innermost last: [its span, whether its step was opened
    # here, whether its function returned]. A batch whose function never returned found no data:
    # it is withdrawn at the next thing Keras does. One whose function returned is in its
    # callbacks, which may run evaluate() or predict(): their batches nest inside its step.
    def _batches(self) -> List[List[Any]]:
        stack = getattr(self._local, "batches", None)
        if stack is None:
            stack = self._local.batches = []
        return stack

    def _drop_unreturned_batch(self) -> None:
        stack = self._batches()
        if stack and not stack[-1][2]:
            self._close(stack.pop(), cancel=True)

    def _close(self, batch: List[Any], cancel: bool) -> None:
        batch[0].__exit__(None, None, None)
        if batch[1]:
            if cancel:
                self._steps.cancel()
            else:
                self._steps.end()

    def _batch_begin(self, phase: str) -> Callable[[Any], Any]:
        def wrap(original: Callable[..., Any]) -> Callable[..., Any]:
            def on_batch_begin(callbacks: Any, *args: Any, **kwargs: Any) -> Any:
                self._drop_unreturned_batch()
                if self._profiler is not None:
                    self._profiler.start_once()
                stepped = self._steps.begin_if_none()
                result = original(callbacks, *args, **kwargs)
                span = _native.span(f"{phase}_function")
                span.__enter__()
                self._batches().append([span, stepped, False])
                return result

            return on_batch_begin

        return wrap

    def _batch_end(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def on_batch_end(callbacks: Any, *args: Any, **kwargs: Any) -> Any:
            stack = self._batches()
            batch = stack[-1] if stack else None
            if batch is not None:
                batch[0].__exit__(None, None, None)
                batch[0], batch[2] = NO_SPAN, True
            try:
                return original(callbacks, *args, **kwargs)
            finally:
                if batch is not None and stack and stack[-1] is batch:
                    self._close(stack.pop(), cancel=False)

        return on_batch_end

    def _boundary(self, starting_phase: Optional[str]) -> Callable[[Any], Any]:
        """fit/evaluate/predict beginning or ending, an epoch ending: a batch still open here found
        no data."""
        def wrap(original: Callable[..., Any]) -> Callable[..., Any]:
            def on_boundary(callbacks: Any, *args: Any, **kwargs: Any) -> Any:
                self._drop_unreturned_batch()
                if starting_phase is not None and self._profiler is not None:
                    self._profiler.start_once()
                return original(callbacks, *args, **kwargs)

            return on_boundary

        return wrap


def _backend(keras: Any) -> str:
    try:
        return str(keras.backend.backend())
    except Exception:  # noqa: BLE001 - an unusual Keras: no backend-specific capture
        return ""


class _TensorFlowProfiler:
    """TensorFlow's profiler for the rest of the program under ``tfprof run``, its profile folded
    into the preload library's trace at exit; paused while the program runs one of its own."""

    def __init__(self, announce: bool) -> None:
        self._announce = announce
        self._captures: List[Any] = []  # TensorFlowCapture, one per stretch it ran
        self._running = False
        self._started = False
        self._program_profiling = False
        self._patches: List[Tuple[object, str, object]] = []
        self._lock = threading.RLock()
        self._own_call = False  # tfprof's own start/stop of TensorFlow's profiler under way

    def start_once(self) -> None:
        if self._started:
            return
        with self._lock:
            if self._started:
                return
            self._started = True
            experimental = importlib.import_module("tensorflow").profiler.experimental
            for attribute, make in (("start", self._program_start), ("stop", self._program_stop)):
                original = getattr(experimental, attribute)
                self._patches.append((experimental, attribute, original))
                setattr(experimental, attribute, make(original))
            atexit.register(self._fold_at_exit)
            self._resume()

    def uninstall(self) -> None:
        for owner, attribute, original in reversed(self._patches):
            setattr(owner, attribute, original)
        self._patches.clear()
        self._pause()

    def _resume(self) -> None:
        from tfprof._tensorflow import TensorFlowCapture

        capture = TensorFlowCapture()
        self._own_call = True
        try:
            # Read at exit, removed after. Level 1: the input fetch, the functions and the costly
            # ops, at less cost than every op.
            capture.start(_gpu_state(), remove_at_exit=False, host_tracer_level=1)
        except RuntimeError as error:  # one already runs, started where tfprof cannot see
            sys.stderr.write(f"tfprof: {error}; tf.data input waits are not recorded\n")
            return
        finally:
            self._own_call = False
        self._captures.append(capture)
        self._running = True

    def _pause(self) -> None:
        if not self._running:
            return
        self._running = False
        self._own_call = True
        try:
            self._captures[-1].stop()
        except RuntimeError as error:
            sys.stderr.write(f"tfprof: {error}\n")
        finally:
            self._own_call = False

    def _program_start(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def start(*args: Any, **kwargs: Any) -> Any:
            if self._own_call:
                return original(*args, **kwargs)
            with self._lock:
                self._pause()
                self._program_profiling = True
            return original(*args, **kwargs)

        return start

    def _program_stop(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def stop(*args: Any, **kwargs: Any) -> Any:
            if self._own_call:
                return original(*args, **kwargs)
            try:
                return original(*args, **kwargs)
            finally:
                with self._lock:
                    if self._program_profiling:
                        self._program_profiling = False
                        self._resume()

        return stop

    def _fold_at_exit(self) -> None:
        """Stops TensorFlow's profiler and folds what it recorded into tfprof run's trace."""
        from tfprof._frameworks._fold_at_exit import finish_and_fold

        with self._lock:
            self._pause()
            try:
                finish_and_fold([c.profile_directory for c in self._captures if c.has_profile()],
                                "TensorFlow's profile (tf.data input waits, ops)", self._announce)
            finally:
                for capture in self._captures:
                    capture.cleanup()


def _gpu_state() -> str:
    try:
        return str(_native.stats().get("gpu_state", "off"))
    except RuntimeError:
        return "off"
