"""Turns ``tfprof.trace(**options)`` keyword arguments into the C ABI's option string."""

from __future__ import annotations

import os
import sys
from typing import Mapping, Union

OptionValue = Union[int, float, str, bool, "os.PathLike[str]"]


def _escape(text: str) -> str:
    # The C parser splits on commas; `\,` and `\\` stand for a literal comma and backslash.
    return text.replace("\\", "\\\\").replace(",", "\\,")


def _value_text(key: str, value: object, caller: str) -> str:
    if isinstance(value, bool):  # before int: bool is an int subclass
        return "on" if value else "off"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)  # shortest text that reads back as the same value (2.5, 1e-05)
    if isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):
        path = os.fspath(value)
        if isinstance(path, str):
            return path
    raise TypeError(
        f"{caller}: option {key}={value!r} has type {type(value).__name__}; "
        "expected int, float, str, bool or a path"
    )


def _pip_cupti_dirs() -> "list[str]":
    """site-packages folders on sys.path, where the nvidia-cuda-cupti wheel puts libcupti."""
    found: "list[str]" = []
    for entry in sys.path:
        if not entry or not os.path.isdir(os.path.join(entry, "nvidia")):
            continue
        if any(os.path.isdir(os.path.join(entry, "nvidia", sub, "lib")) for sub in ("cu13", "cuda_cupti")):
            found.append(entry)
    return found


def with_cupti_search(options: Mapping[str, object]) -> "dict[str, object]":
    """Adds ``cupti_search`` (the pip-installed CUPTI's site-packages) unless the caller chose a
    CUPTI or turned GPU tracing off: the C library cannot see Python's sys.path itself."""
    result = dict(options)
    if "cupti_path" in result or "cupti_search" in result or result.get("cuda") == "off":
        return result
    dirs = [d for d in _pip_cupti_dirs() if ":" not in d]
    if dirs:
        result["cupti_search"] = ":".join(dirs)
    return result


def options_string(options: Mapping[str, object], caller: str = "tfprof.trace") -> str:
    """``{"buffer_events": 4096, "clock": "tsc"}`` -> ``"buffer_events=4096,clock=tsc"``.

    Only the types are checked here; names and values are checked by the library, whose error
    message lists the accepted ones.
    """
    return ",".join(f"{_escape(key)}={_escape(_value_text(key, value, caller))}" for key, value in options.items())
