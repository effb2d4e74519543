"""Framework integrations: steps, layers, input waits and annotations of programs that know
nothing of tfprof, through each framework's public hooks.

Each integration is installed when its framework is imported (at once if it already is), never
imports a framework itself, and is removed again by :func:`disable`. ``tfprof run`` enables them
for Python programs; ``tfprof.trace(frameworks="auto")`` for the length of one session.
"""

from __future__ import annotations

import dataclasses
import importlib.abc
import importlib.util
import sys
import threading
from typing import Callable, Dict, List, Optional, Sequence

KNOWN = ("torch", "keras", "jax")
#: Module spans below this depth are not recorded (1: the model alone; 0: no module spans).
DEFAULT_MODULE_DEPTH = 3


@dataclasses.dataclass
class Settings:
    frameworks: Sequence[str] = KNOWN
    module_depth: int = DEFAULT_MODULE_DEPTH
    #: A line on stderr saying what was hooked (tfprof run says it; tfprof.trace stays quiet).
    announce: bool = False
    #: Keras on TensorFlow: run TensorFlow's profiler too and fold its events (tf.data's input
    #: waits) into the preload library's trace at exit (tfprof run only: tfprof.trace has
    #: tensorflow=True for it).
    tensorflow_profiler: bool = False
    #: PyTorch: torch.profiler's CPU activity (aten ops) folded into the preload library's trace
    #: at exit (tfprof run with TFPROF_TORCH_OPS=on).
    torch_ops: bool = False


class Integration:
    """One framework's hooks. ``install`` gets the imported framework module."""

    #: Whether installing it says so (tfprof run's line). JAX is imported by other frameworks
    #: (Keras imports it when installed): it says so at its first annotation instead.
    announce_on_install = True

    def install(self, module: object, settings: Settings) -> None:
        raise NotImplementedError

    def uninstall(self) -> None:
        raise NotImplementedError


#: Called when the program marks a step itself (tfprof.step): integrations stop marking theirs.
program_steps_listeners: List[Callable[[], None]] = []


class _NoSpan:
    """Stands where a span would be when none was opened: closing it does nothing."""

    def __exit__(self, *exc_info: object) -> None:
        pass


NO_SPAN = _NoSpan()


def notify_program_step() -> None:
    for listener in list(program_steps_listeners):
        listener()


def parse(value: object) -> List[str]:
    """The frameworks= option: "auto" (every known one), "off"/None/False, or names."""
    if value in (None, False, "off", "none", ""):
        return []
    if value in (True, "auto", "on"):
        return list(KNOWN)
    if isinstance(value, str):
        names = [n.strip() for n in value.split(",")]
    elif isinstance(value, (list, tuple, set, frozenset)):
        names = [str(n) for n in value]
    else:
        raise TypeError(f"frameworks={value!r}: expected 'auto', 'off', a name or a list of names")
    unknown = [n for n in names if n not in KNOWN]
    if unknown:
        raise ValueError(f"frameworks: unknown framework(s) {', '.join(map(repr, unknown))}; known: auto, off, "
                         + ", ".join(KNOWN))
    return names


_lock = threading.RLock()
_active: Dict[str, Integration] = {}
_settings: Optional[Settings] = None
_finder: Optional["_ImportWatcher"] = None


def enable(settings: Settings) -> None:
    """Installs the integrations of ``settings.frameworks``: now for a framework already imported,
    else when the program imports it."""
    global _settings, _finder
    with _lock:
        disable()
        _settings = settings
        waiting = []
        for name in settings.frameworks:
            if name in sys.modules:
                _install(name, sys.modules[name])
            else:
                waiting.append(name)
        if waiting:
            _finder = _ImportWatcher(waiting)
            sys.meta_path.insert(0, _finder)


def disable() -> None:
    """Removes every integration and stops watching imports."""
    global _settings, _finder
    with _lock:
        if _finder is not None:
            try:
                sys.meta_path.remove(_finder)
            except ValueError:
                pass
            _finder = None
        for integration in _active.values():
            integration.uninstall()
        _active.clear()
        _settings = None


def _factory(name: str) -> Callable[[], Integration]:
    if name == "torch":
        from tfprof._frameworks._torch import TorchIntegration

        return TorchIntegration
    if name == "keras":
        from tfprof._frameworks._keras import KerasIntegration

        return KerasIntegration
    if name == "jax":
        from tfprof._frameworks._jax import JaxIntegration

        return JaxIntegration
    raise KeyError(name)


#: What each integration records, for the line tfprof run prints.
_RECORDS = {
    "torch": "PyTorch's steps, modules and input waits (docs/pytorch.md)",
    "keras": "Keras' steps, and on TensorFlow its tf.data input waits (docs/keras.md)",
    "jax": "JAX's step and trace annotations (docs/keras.md)",
}


def _install(name: str, module: object) -> None:
    with _lock:
        if _settings is None or name in _active:
            return
        integration = _factory(name)()
        try:
            integration.install(module, _settings)
        except Exception as error:  # noqa: BLE001 - a framework we cannot hook must not break the program
            integration.uninstall()
            sys.stderr.write(f"tfprof: cannot hook {name} ({type(error).__name__}: {error}); "
                             "its steps and layers are not recorded\n")
            return
        _active[name] = integration
        if _settings.announce and integration.announce_on_install:
            announce(name)


def announce(name: str) -> None:
    """tfprof run's line saying what is recorded of framework `name`."""
    sys.stderr.write(f"tfprof: recording {_RECORDS[name]}\n")


class _ImportWatcher(importlib.abc.MetaPathFinder):
    """Installs an integration right after its framework's top-level module has executed."""

    def __init__(self, names: Sequence[str]) -> None:
        self._names = set(names)
        self._finding = threading.local()

    def find_spec(self, fullname, path=None, target=None):  # type: ignore[no-untyped-def]
        if fullname not in self._names or getattr(self._finding, "busy", False):
            return None
        self._finding.busy = True
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self._finding.busy = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        spec.loader = _ThenInstall(spec.loader, fullname)
        return spec


class _ThenInstall(importlib.abc.Loader):
    def __init__(self, loader: importlib.abc.Loader, name: str) -> None:
        self._loader = loader
        self._name = name

    def create_module(self, spec):  # type: ignore[no-untyped-def]
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:  # type: ignore[no-untyped-def]
        self._loader.exec_module(module)
        _install(self._name, module)

    def __getattr__(self, attribute: str) -> object:  # get_resource_reader, is_package, ...
        return getattr(self._loader, attribute)
