"""What the native hot path calls back into: building decorated functions, naming threads."""

from __future__ import annotations

import functools
import inspect
import threading
from typing import Any, Callable, Optional

from tfprof import _native


def _span_name_for(func: Callable[..., Any]) -> str:
    for attribute in ("__qualname__", "__name__"):
        name = getattr(func, attribute, None)
        if isinstance(name, str) and name:
            return name
    return repr(func)


def decorate(name: Optional[str], func: Callable[..., Any]) -> Callable[..., Any]:
    """``@tfprof.span`` / ``@tfprof.span(name)``: ``func`` wrapped so each call is a span."""
    if isinstance(func, (staticmethod, classmethod)):
        # Decorating above @staticmethod/@classmethod: wrap the function, keep the binding kind.
        return type(func)(decorate(name, func.__func__))
    label = _span_name_for(func)
    if inspect.isclass(func):
        raise TypeError(f"tfprof.span cannot decorate the class {label}; decorate its methods instead")
    # Spans belong to the thread that opens them; a coroutine or generator suspends and resumes
    # with other work in between on that thread, so its span would not nest with theirs.
    for check, kind in (
        (inspect.iscoroutinefunction, "coroutine function"),
        (inspect.isasyncgenfunction, "async generator function"),
        (inspect.isgeneratorfunction, "generator function"),
    ):
        if check(func):
            raise TypeError(
                f"tfprof.span cannot decorate the {kind} {label}: its span would stay open across "
                "suspensions and interleave with other work on the thread; put `with "
                "tfprof.span(...)` around the synchronous parts instead"
            )
    wrapper = _native.SpanFunction(label if name is None else name, func)
    functools.update_wrapper(wrapper, func)  # __name__, __qualname__, __doc__, __wrapped__, ...
    return wrapper


def current_thread_name() -> Optional[str]:
    """The calling thread's ``threading`` name; None for threads Python did not start (their
    row keeps the OS name, or the name C code gave it)."""
    # Not threading.current_thread(): for a foreign thread it would create and keep a dummy.
    ident = threading.get_ident()
    for thread in threading.enumerate():
        if thread.ident == ident:
            return None if isinstance(thread, threading._DummyThread) else thread.name
    return None


def install() -> None:
    _native._set_decorator(decorate)
    _native._set_thread_name_source(current_thread_name)
