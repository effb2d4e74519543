"""``tfprof.listen()``: the process waits, with no session, for ``tfprof capture PID``."""

from __future__ import annotations

import os
import re
import sys
from typing import Optional

from tfprof import _native, _preload
from tfprof._options import options_string, with_cupti_search

# tfprof.trace's options that the Python package acts on itself, around a session it starts: a
# capture's session starts inside the library, at a step boundary, where they cannot apply.
_TRACE_ONLY_OPTIONS = ("tensorflow", "frameworks", "module_depth")


def listen(options: Optional[str] = None, /, **keywords: object) -> None:
    """Makes this process capturable on demand: it runs with no session (spans and steps cost
    what they cost with none, and no thread of tfprof's wakes up) until ``tfprof capture PID``
    asks for one. The capture's session starts at the program's next :func:`tfprof.step` on any
    thread, records the number of whole steps asked for (``--steps N``) or about ``--seconds S``,
    events of every thread, is written where the command's ``-o`` says (any output format), and
    the process waits again, holding nothing. Any number of captures, one at a time.

    ``options`` are the session options every capture gets, either as tfprof.trace's keywords
    (``buffer_events=65536``, ``cuda="off"``, ``max_memory_mb=...``) or as one string in the
    library's spelling (``"cuda=off,buffer_events=65536"``), or both; a capture's own
    ``--options`` override them. There is no ``output=`` (each capture names its file) and no
    ``tensorflow=``, ``frameworks=`` or ``module_depth=``, which only :func:`tfprof.trace` runs.

    Only this process's user and root may capture it (the endpoint is an abstract Unix socket,
    ``@tfprof-capture/<pid>``: no TCP port, no file). Call it from any thread, once: a second call
    raises RuntimeError until :func:`unlisten`. Under ``tfprof run --on-demand``, which listens
    already, it says so in one line on stderr and returns. A capture is refused while the program's own
    session runs (``tfprof.trace``, C code's ``prof_start``), and :func:`tfprof.trace` raises
    RuntimeError naming the capture while one records. At interpreter exit a capture in progress
    is ended and written. A ``fork()`` child does not listen; it may call ``listen()`` itself.

    Raises ValueError for a bad option (the message lists the accepted ones), RuntimeError when
    the process listens already, OSError when the endpoint cannot be made.
    """
    if options is not None and not isinstance(options, str):
        raise TypeError(f"tfprof.listen: options={options!r} has type {type(options).__name__}; expected str")
    if "output" in keywords:
        raise ValueError(
            "tfprof.listen: no output= here: each capture writes the file that `tfprof capture PID -o PATH` names"
        )
    for name in _TRACE_ONLY_OPTIONS:
        if name in keywords:
            raise ValueError(
                f"tfprof.listen: {name}= is tfprof.trace's alone; a capture records the program's "
                "tfprof.step() and spans"
            )
    # A CUPTI pip-installed on sys.path is found as tfprof.trace finds it, unless chosen already.
    chosen = options is not None and ("cupti_" in options or "cuda=off" in options)
    settings = dict(keywords) if chosen else with_cupti_search(keywords)
    text = ",".join(part for part in (options or "", options_string(settings, "tfprof.listen")) if part)
    try:
        _native.listen(os.fsencode(text))
    except ValueError as error:
        # The offsets in the library's message point into a string the user never wrote.
        raise ValueError("tfprof.listen: " + re.sub(r" at offset \d+", "", str(error))) from None
    except RuntimeError as error:
        if _preload.on_demand():
            # `tfprof run --on-demand` listens for the whole program already: a script written to
            # run on its own works under it too, as tfprof.trace joins `tfprof run`'s session.
            ignored = " (this call's options are not applied)" if options or keywords else ""
            sys.stderr.write(f"tfprof.listen: `tfprof run --on-demand` listens for this process already{ignored}\n")
            return
        raise RuntimeError(f"tfprof.listen: {error}") from None
    except OSError as error:
        raise OSError(f"tfprof.listen: {error}") from None


def unlisten() -> None:
    """Stops waiting for captures. A capture in progress is ended first and its file written
    (holding the steps completed so far); this call waits for it, from any thread, other Python
    threads running meanwhile. Raises RuntimeError when the process is not listening."""
    try:
        _native.unlisten()
    except RuntimeError as error:
        raise RuntimeError(f"tfprof.unlisten: {error}") from None


def is_listening() -> bool:
    """True while this process waits for captures (between :func:`listen` and :func:`unlisten`),
    whether a capture records now or not. :func:`tfprof.is_running` is True while one records."""
    return _native.is_listening()
