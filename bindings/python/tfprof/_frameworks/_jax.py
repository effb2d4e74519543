"""JAX's own annotations, which JAX programs write for JAX's profiler: each
``jax.profiler.StepTraceAnnotation("train", step_num=N)`` is step N (numbered in order when it
gives no number), each ``jax.profiler.TraceAnnotation(name)`` (and ``annotate_function``) a span.
What runs inside XLA's compiled programs is out of Python's sight: JAX's profiler records it.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, List, Tuple

from tfprof import _native
from tfprof._frameworks import Integration, Settings, announce, program_steps_listeners
from tfprof._frameworks._steps import StepMarks

_STATE = "_tfprof"  # the instance attribute holding what __enter__ needs and opened


class JaxIntegration(Integration):
    announce_on_install = False  # at the first annotation: importing JAX alone records nothing

    def __init__(self) -> None:
        self._patches: List[Tuple[object, str, object]] = []
        self._steps = StepMarks("jax")
        self._announce = False

    def install(self, jax: Any, settings: Settings) -> None:
        profiler = importlib.import_module("jax._src.profiler")
        annotation, step_annotation = profiler.TraceAnnotation, profiler.StepTraceAnnotation
        self._wrap(annotation, "__init__", self._init(step_annotation))
        self._wrap(annotation, "__enter__", self._enter)
        self._wrap(annotation, "__exit__", self._exit)
        program_steps_listeners.append(self._steps.program_marked)
        self._announce = settings.announce

    def uninstall(self) -> None:
        for owner, attribute, original in reversed(self._patches):
            if original is None:
                delattr(owner, attribute)
            else:
                setattr(owner, attribute, original)
        self._patches.clear()
        if self._steps.program_marked in program_steps_listeners:
            program_steps_listeners.remove(self._steps.program_marked)
        self._steps.end()

    def _wrap(self, owner: type, attribute: str, make: Callable[[Any], Any]) -> None:
        own = owner.__dict__.get(attribute)  # None: inherited from jaxlib's TraceMe
        original = getattr(owner, attribute)
        setattr(owner, attribute, make(original))
        self._patches.append((owner, attribute, own))

    def _init(self, step_annotation: type) -> Callable[[Any], Any]:
        def wrap(original: Callable[..., Any]) -> Callable[..., Any]:
            def __init__(annotation: Any, name: str, **kwargs: Any) -> None:
                original(annotation, name, **kwargs)
                if isinstance(annotation, step_annotation):
                    number = kwargs.get("step_num")
                    annotation.__dict__[_STATE] = ("step", number if isinstance(number, int) else None)
                else:
                    annotation.__dict__[_STATE] = ("span", str(name))

            return __init__

        return wrap

    def _enter(self, original: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def __enter__(annotation: Any) -> Any:
            result = original(annotation)
            state = annotation.__dict__.get(_STATE)
            if state is None:
                return result
            if self._announce:
                self._announce = False
                announce("jax")
            kind, value = state
            if kind == "span":
                span = _native.span(value)
                span.__enter__()
                annotation.__dict__[_STATE] = ("open span", span)
            else:
                if value is not None:
                    self._steps.renumber(value, "jax")
                if self._steps.begin_if_none():
                    annotation.__dict__[_STATE] = ("open step", None)
            return result

        return __enter__

    def _exit(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def __exit__(annotation: Any, *exc_info: Any) -> Any:
            state = annotation.__dict__.pop(_STATE, None)
            if state is not None and state[0] == "open span":
                state[1].__exit__(None, None, None)
            elif state is not None and state[0] == "open step":
                self._steps.end()
            return original(annotation, *exc_info)

        return __exit__
