"""``tfprof.convert`` and ``tfprof.merge``: TensorFlow step statistics to Chrome trace JSON."""

from __future__ import annotations

import errno
import os
import re
import warnings
from typing import Iterable, List, Union

from tfprof import _native

PathArg = Union[str, "os.PathLike[str]"]

_ROWS = ("threads", "lanes")


def convert(
    input: PathArg,
    output: PathArg,
    *,
    show_dataflow: bool = True,
    show_memory: bool = False,
    rows: str = "threads",
    salvage: bool = False,
) -> None:
    """Writes the Chrome trace (``.json`` or ``.json.gz``) of the TensorFlow step statistics in
    ``input``: a binary RunMetadata or StepStats, a TFRecord file of RunMetadata, a TensorBoard
    event file or a log directory. It shows what TensorFlow's ``timeline.py`` shows, for every
    run in the input, each run a span on a "Steps" row at its wall-clock time.

    ``show_dataflow``: arrows from each tensor's producer to its consumers. ``show_memory``:
    tensor lifetimes and per-allocator memory counters. ``rows="threads"`` draws one row per
    recorded thread (nanosecond times when the data has them); ``rows="lanes"`` reproduces
    ``timeline.py``'s rows and microsecond times exactly. ``salvage=True`` still writes the runs
    read before damage in the input, and warns (RuntimeWarning) with what was lost.

    Raises FileNotFoundError for a missing input or output directory, ValueError for damaged
    input (the message names the file, the byte offset and the problem), a bad option or an
    output that is not ``.json``/``.json.gz``, and OSError when a file cannot be read or written.
    Works with or without a profiling session running.
    """
    _run("tfprof.convert", [input], output, show_dataflow, show_memory, rows, salvage)


def merge(
    inputs: Iterable[PathArg],
    output: PathArg,
    *,
    show_dataflow: bool = True,
    show_memory: bool = False,
    rows: str = "threads",
    salvage: bool = False,
) -> None:
    """Like :func:`convert` for several inputs merged into one trace: each input gets its own
    group of processes named after its file, and all runs keep their wall-clock times, so runs
    from several processes or hosts line up. With ``salvage=True`` a damaged input contributes
    the runs read before the damage and the others are converted in full."""
    _run("tfprof.merge", list(inputs), output, show_dataflow, show_memory, rows, salvage)


def _run(
    caller: str,
    inputs: List[PathArg],
    output: PathArg,
    show_dataflow: bool,
    show_memory: bool,
    rows: str,
    salvage: bool,
) -> None:
    if not inputs:
        raise ValueError(f"{caller}: no input files")
    for name, flag in (("show_dataflow", show_dataflow), ("show_memory", show_memory), ("salvage", salvage)):
        if not isinstance(flag, bool):
            raise TypeError(f"{caller}: {name}={flag!r} has type {type(flag).__name__}; expected bool")
    if rows not in _ROWS:
        raise ValueError(f"{caller}: rows={rows!r} is not one of {', '.join(_ROWS)}")
    input_paths = [os.fspath(path) for path in inputs]
    output_path = os.fspath(output)
    for path in input_paths:
        if not os.path.exists(path):
            raise FileNotFoundError(errno.ENOENT, f"{caller}: no such input file or directory", path)
    directory = os.path.dirname(os.path.abspath(output_path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(
            errno.ENOENT, f"{caller}: cannot write the trace there: the directory {directory!r} does not exist", output_path
        )
    options = ",".join(
        [
            f"show_dataflow={'on' if show_dataflow else 'off'}",
            f"show_memory={'on' if show_memory else 'off'}",
            f"rows={rows}",
            f"salvage={'on' if salvage else 'off'}",
        ]
    )
    try:
        damage = _native.merge([os.fsencode(path) for path in input_paths], os.fsencode(output_path), options, salvage)
    except ValueError as error:
        # The offsets of option errors point into a string the caller never wrote.
        message = re.sub(r"^(option '[^']*') at offset \d+", r"\1", str(error))
        raise ValueError(f"{caller}: {message}") from None
    except OSError as error:
        raise OSError(f"{caller}: {error}") from None
    if damage:
        warnings.warn(f"{caller}: {damage}", RuntimeWarning, stacklevel=3)
