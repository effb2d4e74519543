"""The ``tfprof`` console script: hands its arguments to the ``tfprof`` executable in the wheel.

The command-line tool is written once, in C++ (tools/tfprof); this script only replaces the Python
process with it, so ``tfprof run``'s exit status and signals are the profiled program's own.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import List, Optional


def _executable_path() -> str:
    """The C++ ``tfprof`` shipped in this package (``tfprof/_bin/tfprof``); it finds
    ``tfprof/libtfprof_preload.so`` relative to itself."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "tfprof")


def main(argv: Optional[List[str]] = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    executable = _executable_path()
    # Python ignores SIGPIPE and SIGXFSZ, and ignored signals stay ignored across exec: give the
    # program the defaults it would have had without this script in between.
    for name in ("SIGPIPE", "SIGXFSZ"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    try:
        os.execv(executable, ["tfprof", *arguments])
    except OSError as error:
        print(f"tfprof: cannot run {executable}: {error.strerror}; reinstall the tfprof package",
              file=sys.stderr)
        return 126 if os.path.exists(executable) else 127
