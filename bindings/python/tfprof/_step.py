"""``tfprof.step(n)``: marks training step ``n`` for the duration of a ``with`` block."""

from __future__ import annotations

import operator

from tfprof import _frameworks, _native


class step:  # noqa: N801 - lower case like the other context managers of the API
    """``with tfprof.step(n): ...`` marks step ``n``: events recorded on any thread until the
    block ends belong to it, and the trace shows it on its own ``Steps`` row. Entering a step
    while one is open on this thread ends that one first."""

    __slots__ = ("number",)

    def __init__(self, number: int) -> None:
        try:
            self.number: int = operator.index(number)
        except TypeError:
            raise TypeError(f"tfprof.step: the step number must be an int, not {type(number).__name__}") from None

    def __enter__(self) -> "step":
        if _frameworks.program_steps_listeners:
            _frameworks.notify_program_step()
        _native.begin_step(self.number)
        return self

    def __exit__(self, *exc_info: object) -> None:
        _native.end_step()

    def __repr__(self) -> str:
        return f"tfprof.step({self.number})"
