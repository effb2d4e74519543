"""``tfprof.summarize``: the figures of ``tfprof summary`` as Python objects.

The analysis is written once, in C++: this module runs the ``tfprof`` executable shipped in the
package with ``summary --json`` and wraps the JSON it prints. The wrapping is generic: every key
of a trace's JSON object is an attribute of :class:`Summary`, objects become :class:`Record`
(attribute access) and lists of objects :class:`Table` (rows, ``to_pandas()``), so figures the
command gains appear here without a change to this file. A few tables get typed rows with
documented fields (:class:`Step`, :class:`Op`, :class:`Kernel`, :class:`Finding`,
:class:`Device`).
"""

from __future__ import annotations

import errno
import html
import importlib
import json
import os
import subprocess
import tempfile
import warnings
from typing import (Any, Callable, Dict, Generic, Iterator, List, Mapping, Optional, Sequence, Tuple, Type,
                    TypeVar, Union, overload)

from tfprof import _cli

PathArg = Union[str, "os.PathLike[str]"]
#: A value ``summarize(**options)`` turns into a command-line option.
OptionValue = Union[bool, int, str, Sequence[str], None]


class Record:
    """One JSON object of the summary: ``record.key`` or ``record["key"]`` for each key; nested
    objects are Records, lists of objects :class:`Table`. ``to_dict()`` gives the plain JSON."""

    __slots__ = ("_data",)
    _data: Dict[str, Any]

    def __init__(self, data: Mapping[str, Any]) -> None:
        object.__setattr__(self, "_data", dict(data))

    def __getattr__(self, name: str) -> Any:
        data: Dict[str, Any] = object.__getattribute__(self, "_data")
        if name in data:
            return _wrap(name, data[name])
        raise AttributeError(
            f"{type(self).__name__} has no field {name!r}; its fields: {', '.join(data)}"
        )

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __getitem__(self, key: str) -> Any:
        return _wrap(key, self._data[key])

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __dir__(self) -> List[str]:
        return sorted(set(super().__dir__()) | set(self._data))

    def keys(self) -> List[str]:
        """The JSON object's keys, in the command's order."""
        return list(self._data)

    def to_dict(self) -> Dict[str, Any]:
        """The JSON object as the command printed it (a copy)."""
        return json.loads(json.dumps(self._data))  # type: ignore[no-any-return]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Record) and self._data == other._data

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        fields = ", ".join(f"{key}={_short(value)}" for key, value in self._data.items())
        return f"{type(self).__name__}({fields})"


class Step(Record):
    """A step's time split into parts (JSON ``steps`` and ``step_total``); times in ns. Each
    instant of the step counts once, for the first of: GPU compute, communication, memcpy, input
    wait, host compute, idle."""

    @property
    def number(self) -> int:
        """The step number the program gave (-1 in ``step_total``)."""
        return int(self._data["number"])

    @property
    def process(self) -> str:
        return str(self._data["process"])

    @property
    def begin_ns(self) -> int:
        return int(self._data["begin_ns"])

    @property
    def duration_ns(self) -> int:
        return int(self._data["duration_ns"])

    @property
    def gpu_compute_ns(self) -> int:
        return int(self._data["gpu_compute_ns"])

    @property
    def communication_ns(self) -> int:
        return int(self._data["communication_ns"])

    @property
    def memcpy_ns(self) -> int:
        return int(self._data["memcpy_ns"])

    @property
    def input_wait_ns(self) -> int:
        return int(self._data["input_wait_ns"])

    @property
    def host_compute_ns(self) -> int:
        return int(self._data["host_compute_ns"])

    @property
    def idle_ns(self) -> int:
        return int(self._data["idle_ns"])

    @property
    def gpu_idle_ns(self) -> int:
        """Time of the step no GPU work ran (overlaps the host parts)."""
        return int(self._data["gpu_idle_ns"])

    @property
    def kernels(self) -> int:
        return int(self._data["kernels"])


class Op(Record):
    """A host op of ``top_ops_by_self`` / ``top_ops_by_total``, over the whole trace; times in ns."""

    @property
    def name(self) -> str:
        return str(self._data["name"])

    @property
    def count(self) -> int:
        """Calls."""
        return int(self._data["count"])

    @property
    def total_ns(self) -> int:
        return int(self._data["total_ns"])

    @property
    def self_ns(self) -> int:
        """Total time less the time of the ops nested in it."""
        return int(self._data["self_ns"])

    @property
    def max_ns(self) -> int:
        return int(self._data["max_ns"])


class Kernel(Record):
    """A GPU kernel name of ``top_kernels``; times in ns."""

    @property
    def name(self) -> str:
        return str(self._data["name"])

    @property
    def count(self) -> int:
        return int(self._data["count"])

    @property
    def total_ns(self) -> int:
        return int(self._data["total_ns"])

    @property
    def min_ns(self) -> int:
        return int(self._data["min_ns"])

    @property
    def max_ns(self) -> int:
        return int(self._data["max_ns"])

    @property
    def share(self) -> float:
        """Fraction of all kernel time in the trace."""
        return float(self._data["share"])

    @property
    def communication(self) -> bool:
        """A collective (NCCL, ...) kernel."""
        return bool(self._data["communication"])


class Finding(Record):
    """A diagnosis: what bounds the steps, the figures that show it and what to change."""

    @property
    def kind(self) -> str:
        """``"input_bound"``, ``"launch_bound"``, ...: stable across versions, for code."""
        return str(self._data["kind"])

    @property
    def title(self) -> str:
        return str(self._data["title"])

    @property
    def evidence(self) -> str:
        return str(self._data["evidence"])

    @property
    def recommendations(self) -> List[str]:
        return [str(text) for text in self._data["recommendations"]]

    @property
    def steps(self) -> List[int]:
        """The steps it concerns."""
        return [int(number) for number in self._data["steps"]]


class Device(Record):
    """A GPU's utilisation over the steps (JSON ``devices``); times in ns."""

    @property
    def process(self) -> str:
        return str(self._data["process"])

    @property
    def device(self) -> int:
        return int(self._data["device"])

    @property
    def busy_ns(self) -> int:
        """Time any kernel or copy ran on it within the window."""
        return int(self._data["busy_ns"])

    @property
    def window_ns(self) -> int:
        return int(self._data["window_ns"])

    @property
    def utilization(self) -> float:
        """``busy_ns / window_ns``."""
        return float(self._data["utilization"])


RowT = TypeVar("RowT", bound=Record)


class Table(Generic[RowT]):
    """A list of JSON objects (``summary.steps``, ``summary.top_kernels``, ...): a sequence of
    rows, ``columns`` their keys, ``to_pandas()`` a DataFrame with a column per key."""

    __slots__ = ("_name", "_rows", "_row_type")

    def __init__(self, name: str, rows: Sequence[Mapping[str, Any]], row_type: Type[RowT]) -> None:
        self._name = name
        self._rows = [dict(row) for row in rows]
        self._row_type = row_type

    @property
    def name(self) -> str:
        """The JSON key the table was read from."""
        return self._name

    @property
    def columns(self) -> List[str]:
        """Every key of the rows, in first-seen order."""
        seen: Dict[str, None] = {}
        for row in self._rows:
            seen.update(dict.fromkeys(row))
        return list(seen)

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> RowT: ...

    @overload
    def __getitem__(self, index: slice) -> "Table[RowT]": ...

    def __getitem__(self, index: Union[int, slice]) -> Union[RowT, "Table[RowT]"]:
        if isinstance(index, slice):
            return Table(self._name, self._rows[index], self._row_type)
        return self._row_type(self._rows[index])

    def __iter__(self) -> Iterator[RowT]:
        return (self._row_type(row) for row in self._rows)

    def __bool__(self) -> bool:
        return bool(self._rows)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Table) and self._rows == other._rows

    __hash__ = None  # type: ignore[assignment]

    def to_dicts(self) -> List[Dict[str, Any]]:
        """The rows as the command printed them (copies)."""
        return json.loads(json.dumps(self._rows))  # type: ignore[no-any-return]

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame``, one row per row and one column per key (nested objects and
        lists stay Python objects in their cells). ImportError when pandas is not installed."""
        return _pandas().DataFrame(self.to_dicts(), columns=self.columns)

    def __repr__(self) -> str:
        return f"<tfprof Table {self._name!r}: {len(self._rows)} rows of {', '.join(self.columns)}>"

    def _repr_html_(self) -> str:
        return _html_table(self.columns, self._rows)


_TYPED_TABLES: Dict[str, Type[Record]] = {
    "steps": Step,
    "top_ops_by_self": Op,
    "top_ops_by_total": Op,
    "top_kernels": Kernel,
    "findings": Finding,
    "devices": Device,
}
_TYPED_RECORDS: Dict[str, Type[Record]] = {"step_total": Step, "breakdown": Step}


def _wrap(key: str, value: Any) -> Any:
    """A JSON value as the object layer shows it: objects as Records, lists of objects as
    Tables, the rest as it is (lists of numbers or strings as lists)."""
    if isinstance(value, dict):
        return _TYPED_RECORDS.get(key, Record)(value)
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        return Table(key, value, _TYPED_TABLES.get(key, Record))
    if isinstance(value, list) and not value and key in _TYPED_TABLES:
        return Table(key, value, _TYPED_TABLES[key])
    if isinstance(value, list):
        return list(value)
    return value


def _short(value: Any) -> str:
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return f"[{len(value)} rows]"
    if isinstance(value, dict):
        return "{...}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _pandas() -> Any:
    try:
        return importlib.import_module("pandas")
    except ImportError as error:
        raise ImportError(
            "tfprof: to_pandas() needs pandas, which is not installed: pip install pandas "
            "(the figures themselves are there without it: summary.steps, summary.top_kernels, ...)"
        ) from error


class Summary(Record):
    """The summary of one trace: every key of the trace's object in ``tfprof summary --json``
    is an attribute (``summary.steps``, ``summary.kernel_count``, ``summary.losses.dropped_events``,
    and any the command adds); ``keys()`` lists them. Times are in nanoseconds.
    ``str(summary)`` is the command's text summary, ``to_pandas()`` the tables as DataFrames,
    and in Jupyter it shows as a compact HTML summary."""

    __slots__ = ("_text_source", "_text", "_keep")
    _text_source: Optional[Callable[[], str]]
    _text: Optional[str]

    def __init__(self, data: Mapping[str, Any], text_source: Optional[Callable[[], str]] = None,
                 keep: object = None) -> None:
        super().__init__(data)
        object.__setattr__(self, "_text_source", text_source)
        object.__setattr__(self, "_text", None)
        # What must live as long as the summary (the temporary file Trace.summary() wrote).
        object.__setattr__(self, "_keep", keep)

    def __getattr__(self, name: str) -> Any:
        # At the top level every list is a table (an empty one too), as tables() says.
        data: Dict[str, Any] = object.__getattribute__(self, "_data")
        if isinstance(data.get(name), list) and not data[name]:
            return Table(name, [], _TYPED_TABLES.get(name, Record))
        return super().__getattr__(name)

    @property
    def path(self) -> str:
        """The file summarized."""
        return str(self._data["path"])

    @property
    def format(self) -> str:
        """The format read, in words."""
        return str(self._data["format"])

    @property
    def steps(self) -> Table[Step]:
        """One row per step, in order (all of them, unlike the text's table)."""
        return Table("steps", self._data["steps"], Step)

    @property
    def step_total(self) -> Step:
        """The parts of all steps added up."""
        return Step(self._data["step_total"])

    @property
    def top_ops_by_self(self) -> Table[Op]:
        return Table("top_ops_by_self", self._data["top_ops_by_self"], Op)

    @property
    def top_ops_by_total(self) -> Table[Op]:
        return Table("top_ops_by_total", self._data["top_ops_by_total"], Op)

    @property
    def top_kernels(self) -> Table[Kernel]:
        return Table("top_kernels", self._data["top_kernels"], Kernel)

    @property
    def findings(self) -> Table[Finding]:
        """The diagnosis, most important first; empty when the figures support none."""
        return Table("findings", self._data["findings"], Finding)

    @property
    def devices(self) -> Table[Device]:
        return Table("devices", self._data["devices"], Device)

    def tables(self) -> List[str]:
        """The names of the tables, in the command's order: each top-level key whose value is a
        list of objects (an empty one too: a table with no rows in this trace), then, as
        dotted paths, the non-empty lists of objects inside top-level objects
        (``"memory.devices"``)."""
        names = [key for key, value in self._data.items()
                 if isinstance(value, list) and all(isinstance(row, dict) for row in value)]
        for key, value in self._data.items():
            if isinstance(value, dict):
                names += _nested_tables(key, value)
        return names

    @overload
    def to_pandas(self, table: str) -> Any: ...

    @overload
    def to_pandas(self, table: None = None) -> Dict[str, Any]: ...

    def to_pandas(self, table: Optional[str] = None) -> Any:
        """``to_pandas("steps")``: that table as a ``pandas.DataFrame`` (a table inside an object
        by its dotted path: ``to_pandas("memory.devices")``); ``to_pandas()``: a dict of
        every table (:meth:`tables`) by name. ImportError when pandas is not installed, KeyError
        naming the tables for a name that is none."""
        if table is None:
            return {name: self._table(name).to_pandas() for name in self.tables()}
        return self._table(table).to_pandas()

    def _table(self, name: str) -> Table[Record]:
        if name not in self.tables():
            raise KeyError(f"tfprof: the summary has no table {name!r}; its tables: {', '.join(self.tables())}")
        value: Any = self._data
        for part in name.split("."):
            value = value[part]
        return Table(name, value, _TYPED_TABLES.get(name, Record))

    def text(self) -> str:
        """The text ``tfprof summary`` prints for the file (run when first asked for)."""
        if self._text is None:
            if self._text_source is None:
                raise RuntimeError("tfprof: this summary was made from JSON alone and has no text")
            object.__setattr__(self, "_text", self._text_source())
        assert self._text is not None
        return self._text

    def __str__(self) -> str:
        try:
            return self.text()
        except (OSError, ValueError, RuntimeError) as error:
            return f"{self!r} (no text summary: {error})"

    def __repr__(self) -> str:
        steps = self._data.get("steps", [])
        figures = [f"{len(steps)} step{'' if len(steps) == 1 else 's'}"]
        if steps:
            figures.append(f"median step {_ms(_median([int(s['duration_ns']) for s in steps]))} ms")
        if self._data.get("has_gpu"):
            figures.append(f"{self._data.get('kernel_count', 0)} kernels")
        findings = [str(f.get("kind", "")) for f in self._data.get("findings", [])]
        if findings:
            figures.append("findings: " + ", ".join(findings))
        return f"<tfprof Summary of {self._data.get('path', '?')!r}: {'; '.join(figures)}>"

    def _repr_html_(self) -> str:
        return _summary_html(self._data)


def _nested_tables(path: str, data: Mapping[str, Any]) -> List[str]:
    names: List[str] = []
    for key, value in data.items():
        if isinstance(value, list) and value and all(isinstance(row, dict) for row in value):
            names.append(f"{path}.{key}")
        elif isinstance(value, dict):
            names += _nested_tables(f"{path}.{key}", value)
    return names


def _median(values: List[int]) -> int:
    """As the summary computes it (tools/tfprof/analysis/median.h): for an even count the mean of
    the two middle values, rounded down."""
    if not values:
        return 0
    ordered = sorted(values)
    upper = ordered[len(ordered) // 2]
    if len(ordered) % 2:
        return upper
    lower = ordered[len(ordered) // 2 - 1]
    return lower + (upper - lower) // 2


def _ms(ns: int) -> str:
    return f"{ns / 1e6:.3f}"


_STEP_PARTS = ("gpu_compute_ns", "communication_ns", "memcpy_ns", "input_wait_ns", "host_compute_ns", "idle_ns",
               "gpu_idle_ns")


# The parts only GPU work fills, left out of the HTML step table of a trace with none.
_GPU_STEP_PARTS = ("gpu_compute_ns", "communication_ns", "memcpy_ns", "gpu_idle_ns")
# Steps drawn one per row in the HTML, as the text's default --steps.
_HTML_STEP_ROWS = 20


def _html_table(columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> str:
    head = "".join(f"<th>{html.escape(column)}</th>" for column in columns)
    body = "".join("<tr>" + "".join(_html_cell(_cell(row.get(column))) for column in columns) + "</tr>"
                   for row in rows)
    return f'<table class="tfprof"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _html_scalar_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """A table of the rows' numbers and strings (nested lists and objects left out), times in
    ms: for tables this module knows only by their JSON."""
    columns: Dict[str, str] = {}
    for row in rows:
        for key, value in row.items():
            if not isinstance(value, (dict, list)):
                columns.setdefault(key, key[:-3] + " ms" if key.endswith("_ns") else key)
    shown = [{columns[key]: _ms(int(row[key])) if key.endswith("_ns") and isinstance(row.get(key), int)
              else row.get(key) for key in columns} for row in rows]
    return _html_table(list(columns.values()), shown)


# Longer cells (C++ kernel signatures) are cut in the HTML, the whole text in their tooltip.
_HTML_CELL_CHARS = 80


def _html_cell(text: str) -> str:
    if len(text) <= _HTML_CELL_CHARS:
        return f"<td>{html.escape(text)}</td>"
    return f'<td title="{html.escape(text)}">{html.escape(text[:_HTML_CELL_CHARS - 3])}...</td>'


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def _summary_html(data: Mapping[str, Any]) -> str:
    """Headline figures, the step table (ms and % of the step), the findings and the top ops."""
    steps: List[Dict[str, Any]] = list(data.get("steps", []))
    parts = [f"<div class=\"tfprof-summary\"><h3>tfprof summary: {html.escape(str(data.get('path', '')))}</h3>"]
    headline = [f"{html.escape(str(data.get('format', '')))}", f"{data.get('events', 0)} events",
                f"{_ms(int(data.get('end_ns', 0)) - int(data.get('begin_ns', 0)))} ms"]
    if steps:
        headline.append(f"{len(steps)} step{'' if len(steps) == 1 else 's'}, median {_ms(_median([int(s['duration_ns']) for s in steps]))} ms")
    if data.get("has_gpu"):
        headline.append(f"{data.get('kernel_count', 0)} kernels, {_ms(int(data.get('kernel_total_ns', 0)))} ms")
    parts.append("<p>" + " · ".join(headline) + "</p>")
    if steps:
        gpu = bool(data.get("has_gpu"))
        step_parts = [part for part in _STEP_PARTS if gpu or part not in _GPU_STEP_PARTS]
        rows: List[Dict[str, Any]] = []
        for step in steps[:_HTML_STEP_ROWS] + [dict(data.get("step_total", {}), number="all")]:
            duration = int(step.get("duration_ns", 0))
            row: Dict[str, Any] = {"step": step.get("number"), "process": step.get("process", ""),
                                   "time ms": _ms(duration)}
            for part in step_parts:
                share = int(step.get(part, 0)) / duration if duration else 0.0
                row[part[:-3].replace("_", " ") + " %"] = f"{100 * share:.1f}"
            if gpu:
                row["kernels"] = step.get("kernels", 0)
            rows.append(row)
        more = len(steps) - _HTML_STEP_ROWS
        note = f"<p>{more} more steps: <code>summary.steps</code> has them all.</p>" if more > 0 else ""
        parts.append("<h4>Steps</h4>" + _html_table(list(rows[0]), rows) + note)
    findings = list(data.get("findings", []))
    if findings:
        items = "".join(
            f"<li><b>{html.escape(str(f.get('title', '')))}</b><br>{html.escape(str(f.get('evidence', '')))}"
            + "<ul>" + "".join(f"<li>{html.escape(str(r))}</li>" for r in f.get("recommendations", [])) + "</ul></li>"
            for f in findings
        )
        parts.append(f"<h4>Findings</h4><ul>{items}</ul>")
    by_op = data.get("gpu_time_by_op")
    if isinstance(by_op, list) and by_op and all(isinstance(row, dict) for row in by_op):
        parts.append("<h4>GPU time by op</h4>" + _html_scalar_table(by_op))
    for key, title in (("top_ops_by_self", "Top ops by self time"), ("top_kernels", "Top kernels")):
        table = list(data.get(key, []))
        if table:
            rows = [{"name": row.get("name"), "calls": row.get("count"), "total ms": _ms(int(row.get("total_ns", 0))),
                     **({"self ms": _ms(int(row["self_ns"]))} if "self_ns" in row else {})} for row in table]
            parts.append(f"<h4>{title}</h4>" + _html_table(list(rows[0]), rows))
    parts.append("</div>")
    return "".join(parts)


def _option_words(top: Optional[int], input_ops: Optional[Sequence[str]], salvage: bool,
                  options: Mapping[str, OptionValue]) -> List[str]:
    """The command-line options: ``name=value`` becomes ``--name value`` (underscores as dashes),
    ``True`` a flag, ``False``/``None`` nothing, a list of strings comma-separated."""
    words: List[str] = []
    every: Dict[str, OptionValue] = {"top": top, "input_ops": input_ops, "salvage": salvage, **options}
    for name, value in every.items():
        flag = "--" + name.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            words.append(flag)
        elif isinstance(value, bool) or not isinstance(value, (int, str, list, tuple)):
            raise TypeError(f"tfprof.summarize: {name}={value!r} has type {type(value).__name__}; "
                            "expected bool, int, str or a list of str")
        elif isinstance(value, (list, tuple)):
            words += [flag, ",".join(str(item) for item in value)]
        else:
            words += [flag, str(value)]
    return words


def _run_summary(caller: str, path: str, words: List[str]) -> Tuple[int, str, str]:
    executable = _cli._executable_path()
    try:
        done = subprocess.run([executable, "summary", *words, "--", path], capture_output=True, text=True,
                              errors="replace", check=False)
    except OSError as error:
        raise OSError(error.errno, f"{caller}: cannot run {executable}: {error.strerror}; "
                                   "reinstall the tfprof package") from None
    return done.returncode, str(done.stdout), str(done.stderr)


def _stderr_lines(stderr: str) -> List[str]:
    return [line for line in stderr.splitlines() if line.strip()]


def summarize(
    path: PathArg,
    *,
    top: Optional[int] = None,
    input_ops: Optional[Sequence[str]] = None,
    salvage: bool = False,
    **options: OptionValue,
) -> Summary:
    """Summarizes the trace in ``path`` as ``tfprof summary`` does, and returns its figures as a
    :class:`Summary`. ``path`` is any trace tfprof reads (tfprof's, the PyTorch profiler's,
    TensorFlow's or JAX's profile, Perfetto, TensorBoard event files; the format is read from the
    content).

    ``top``: rows in the top ops, top kernels and idle gap tables (default 10). ``input_ops``:
    patterns (globs) naming the host ops that wait for input, replacing the defaults.
    ``salvage=True`` summarizes what a damaged file holds before the damage, with a
    RuntimeWarning saying what was lost. Other keyword options are passed to the command as
    ``--name value`` (``name=True``: the flag alone), so options the command gains need no
    change here; ``tfprof summary --help`` lists them.

    Raises FileNotFoundError for a missing file, ValueError for a damaged or unreadable file or
    a bad option (with the command's message), OSError when the ``tfprof`` executable cannot run.
    A file that simply ends early (its writer killed mid-write) is summarized to its last whole
    step, with a RuntimeWarning.
    """
    caller = "tfprof.summarize"
    text_path = os.fspath(path)
    if not os.path.exists(text_path):
        raise FileNotFoundError(errno.ENOENT, f"{caller}: no such trace file or directory", text_path)
    words = _option_words(top, input_ops, salvage, options)
    status, stdout, stderr = _run_summary(caller, text_path, ["--json", *words])
    if status == 2 or not stdout.strip():
        message = "; ".join(_stderr_lines(stderr)) or f"tfprof summary exited with status {status}"
        raise ValueError(f"{caller}: {message}")
    document = json.loads(stdout)
    errors = document.get("errors", [])
    if errors:
        raise ValueError(f"{caller}: {errors[0]['error']}")
    traces = document["traces"]
    if len(traces) != 1:
        raise ValueError(f"{caller}: tfprof summary returned {len(traces)} summaries for one file")
    data: Dict[str, Any] = traces[0]
    if data.get("damage"):
        warnings.warn(f"{caller}: salvaged what precedes the damage: {data['damage']}", RuntimeWarning, stacklevel=2)
    cut = data.get("cut")
    if isinstance(cut, dict) and cut.get("warning"):
        warnings.warn(f"{caller}: {cut['warning']}", RuntimeWarning, stacklevel=2)
    return Summary(data, _text_source(caller, text_path, words))


def _text_source(caller: str, path: str, words: List[str]) -> Callable[[], str]:
    """Runs the text summary of the same file with the same options when first asked, provided
    the file is still the one summarized."""
    identity = _identity(path)

    def text() -> str:
        if _identity(path) != identity:
            raise ValueError(f"{caller}: {path!r} changed or went away since it was summarized")
        status, stdout, stderr = _run_summary(caller, path, words)
        if status != 0 and not stdout:
            raise ValueError(f"{caller}: {'; '.join(_stderr_lines(stderr))}")
        return stdout

    return text


def _identity(path: str) -> Optional[Tuple[int, int]]:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns


def summary_of_trace(path: Optional[str], export: Callable[[str], None]) -> Summary:
    """For :meth:`Trace.summary`: the summary of ``path``, or, when the trace was written
    nowhere, of a temporary file ``export`` writes (removed with the summary)."""
    if path is not None and os.path.exists(path):
        return summarize(path)
    directory = tempfile.TemporaryDirectory(prefix="tfprof-summary-")
    exported = os.path.join(directory.name, "trace.json")
    export(exported)
    summary = summarize(exported)
    object.__setattr__(summary, "_keep", directory)
    return summary
