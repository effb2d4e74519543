"""``tfprof.convert`` and ``tfprof.merge``: the library's convert engine, the same one
``prof_convert``/``prof_merge`` (C) and ``tfprof convert``/``tfprof merge`` (the command) run, so
the three write the same bytes for the same inputs and options."""

from __future__ import annotations

import errno
import os
import re
import warnings
from typing import Iterable, List, Optional, Union

from tfprof import _native

PathArg = Union[str, "os.PathLike[str]"]

_LAYOUTS = ("tfprof", "timeline")
_FORMATS = ("json", "json.gz", "pb", "tfrecord", "tensorboard", "perfetto", "xplane")
_ALIGNMENTS = ("wall", "start")
_ROWS = ("threads", "lanes")


def convert(
    input: PathArg,
    output: PathArg,
    *,
    layout: str = "tfprof",
    format: Optional[str] = None,
    salvage: bool = False,
    show_dataflow: Optional[bool] = None,
    show_memory: Optional[bool] = None,
    rows: Optional[str] = None,
    tensorboard_profile: bool = True,
) -> None:
    """Converts the trace in ``input`` to ``output``. ``input`` may be in any format tfprof reads:
    tfprof's or the PyTorch profiler's (or any) Chrome trace JSON, plain or gzip; a TensorFlow
    RunMetadata or StepStats; a TFRecord file of RunMetadata; a TensorBoard event file or log
    directory; a Perfetto trace; TensorFlow's or JAX's profile (``<host>.xplane.pb``, or a
    profile or log directory: the newest ``plugins/profile/<run>/``, one process group per host).
    The format is read from the content.

    ``output``'s name (or ``format``: "json", "json.gz", "pb", "tfrecord", "tensorboard",
    "perfetto", "xplane") chooses what is written: Chrome trace JSON (``.json``, ``.json.gz``),
    one RunMetadata (``.pb``), a TFRecord of one RunMetadata per step (``.tfrecord``), Perfetto's
    protobuf trace (``.pftrace``, ``.perfetto-trace``; docs/perfetto.md), an XPlane profile
    (``.xplane.pb``, what TensorBoard's Profile tab reads), or a TensorBoard log directory (an
    existing directory or a path ending in ``/``): an event file, and beside it the XPlane profile
    ``plugins/profile/<run>/<host>.xplane.pb`` unless ``tensorboard_profile=False``.

    ``layout="tfprof"`` (the default) writes tfprof's own layout: processes, threads, streams,
    steps, PyTorch-profiler categories and the wall-clock origin. ``layout="timeline"`` draws
    TensorFlow step statistics as TensorFlow's ``timeline.py`` does (Chrome JSON only; other
    inputs are first made into step statistics), with its options: ``show_dataflow`` (arrows from
    each tensor's producer to its consumers, default on), ``show_memory`` (tensor lifetimes and
    allocator counters, default off) and ``rows`` ("threads": a row per thread, nanoseconds;
    "lanes": timeline.py's rows and whole microseconds exactly). ``salvage=True`` still writes
    what was read before damage in the input, and warns (RuntimeWarning) with what was lost. An
    input that simply ends early (its writer killed mid-write) needs no salvage: it is converted to
    its last whole step, with a RuntimeWarning saying what was kept and dropped.

    Raises FileNotFoundError for a missing input or output directory, ValueError for damaged or
    unreadable input (the message names the file, the byte offset and the problem), a bad or
    misplaced option, an output named in no format or an output that is the input, and OSError
    when a file cannot be read or written. Works with or without a profiling session running.
    """
    options = _options("tfprof.convert", layout, format, None, salvage, show_dataflow, show_memory, rows,
                       tensorboard_profile)
    _run("tfprof.convert", [input], output, options, salvage, merging=False)


def merge(
    inputs: Iterable[PathArg],
    output: PathArg,
    *,
    layout: str = "tfprof",
    format: Optional[str] = None,
    align: str = "wall",
    fold: bool = False,
    salvage: bool = False,
    show_dataflow: Optional[bool] = None,
    show_memory: Optional[bool] = None,
    rows: Optional[str] = None,
    tensorboard_profile: bool = True,
) -> None:
    """Like :func:`convert` for several inputs on one timeline: each input becomes its own group
    of processes, named "rank R · HOST · pid P" with what the file records (else its file name).
    ``align="wall"`` lines the inputs up by wall-clock time (an input that recorded none is put at
    the first event of the earliest input, with a note); ``align="start"`` puts every input's
    first event at time 0. With ``layout="timeline"`` each input's processes are prefixed with its
    file name, at its wall-clock times. With ``salvage=True`` a damaged input contributes what was
    read before the damage and the others are merged in full. ``fold=True`` makes the inputs
    after the first more of the first one's process (TensorFlow's profile taken beside a tfprof
    session): their host threads join its process, their GPUs its group, and their steps count
    only if the first input marked none."""
    if not isinstance(fold, bool):
        raise TypeError(f"tfprof.merge: fold={fold!r} has type {type(fold).__name__}; expected bool")
    options = _options("tfprof.merge", layout, format, align, salvage, show_dataflow, show_memory, rows,
                       tensorboard_profile)
    if fold:
        options += ",fold=on"
    _run("tfprof.merge", list(inputs), output, options, salvage, merging=True)


def _on_off(value: bool) -> str:
    return "on" if value else "off"


def _options(
    caller: str,
    layout: str,
    format: Optional[str],
    align: Optional[str],
    salvage: bool,
    show_dataflow: Optional[bool],
    show_memory: Optional[bool],
    rows: Optional[str],
    tensorboard_profile: bool = True,
) -> str:
    """The engine's option string; the engine itself says which options do not go together."""
    for name, value, choices in (("layout", layout, _LAYOUTS), ("format", format, _FORMATS),
                                 ("align", align, _ALIGNMENTS), ("rows", rows, _ROWS)):
        if value is not None and value not in choices:
            raise ValueError(f"{caller}: {name}={value!r} is not one of {', '.join(choices)}")
    for name, flag in (("salvage", salvage), ("show_dataflow", show_dataflow), ("show_memory", show_memory),
                       ("tensorboard_profile", tensorboard_profile)):
        if flag is not None and not isinstance(flag, bool):
            raise TypeError(f"{caller}: {name}={flag!r} has type {type(flag).__name__}; expected bool")
    items = [f"layout={layout}"]
    if format is not None:
        items.append(f"format={format}")
    if align is not None and align != "wall":
        items.append(f"align={align}")
    if salvage:
        items.append("salvage=on")
    if show_dataflow is not None:
        items.append(f"show_dataflow={_on_off(show_dataflow)}")
    if show_memory is not None:
        items.append(f"show_memory={_on_off(show_memory)}")
    if rows is not None:
        items.append(f"rows={rows}")
    if not tensorboard_profile:
        items.append("tensorboard_profile=off")
    return ",".join(items)


def _run(caller: str, inputs: List[PathArg], output: PathArg, options: str, salvage: bool, merging: bool) -> None:
    if not inputs:
        raise ValueError(f"{caller}: no input files")
    input_paths = [os.fspath(path) for path in inputs]
    output_path = os.fspath(output)
    for path in input_paths:
        if not os.path.exists(path):
            raise FileNotFoundError(errno.ENOENT, f"{caller}: no such input file or directory", path)
    directory = os.path.dirname(os.path.abspath(output_path.rstrip("/") or output_path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(
            errno.ENOENT, f"{caller}: cannot write the trace there: the directory {directory!r} does not exist", output_path
        )
    try:
        # The damage salvaged, or the warning for an input cut short; "" when neither.
        damage = _native.convert(
            [os.fsencode(path) for path in input_paths], os.fsencode(output_path), options, merging, salvage
        )
    except ValueError as error:
        # The offsets of option errors point into a string the caller never wrote.
        message = re.sub(r"^(option '[^']*') at offset \d+", r"\1", str(error))
        raise ValueError(f"{caller}: {message}") from None
    except OSError as error:
        raise OSError(f"{caller}: {error}") from None
    if damage:
        warnings.warn(f"{caller}: {damage}", RuntimeWarning, stacklevel=3)


def fold(caller: str, trace: PathArg, profiles: List[PathArg], output: PathArg) -> None:
    """Writes `trace` with other profilers' profiles of the same process folded in (their threads
    join its process; its steps stand) to `output`: TensorFlow's profile, torch.profiler's ops."""
    _run(caller, [trace, *profiles], output, "layout=tfprof,fold=on", salvage=False, merging=True)
