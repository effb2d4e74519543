"""A framework's own profile folded into `tfprof run`'s trace when the interpreter exits
(TensorFlow's profiler under Keras, torch.profiler's CPU ops with TFPROF_TORCH_OPS=on): the preload
library writes its trace first (tfprof_preload_finish), then each profile joins the trace's
process (merge with fold=on), written beside the trace and renamed over it, so a failure leaves
tfprof's own trace."""

from __future__ import annotations

import ctypes
import os
import sys
from typing import List

from tfprof import _preload


def finish_and_fold(profiles: List[str], what: str, announce: bool) -> None:
    """`profiles`: files or directories any tfprof reader takes; `what` names them in messages."""
    if not profiles:
        return
    finish = _preload.function("tfprof_preload_finish")
    if finish is None:
        return
    finish.restype = ctypes.c_char_p
    written = finish()
    output = os.fsdecode(written) if written else ""
    if not output:
        return
    if not os.path.isfile(output):
        sys.stderr.write(f"tfprof: {what} is not added to {output}, a TensorBoard directory: write a "
                         "trace file (-o trace.json) to have it\n")
        return
    folded = os.path.join(os.path.dirname(os.path.abspath(output)),
                          f".tfprof-fold-{os.getpid()}-{os.path.basename(output)}")
    try:
        from tfprof._convert import fold

        fold("tfprof run", output, list(profiles), folded)
        os.replace(folded, output)
        if announce:
            sys.stderr.write(f"tfprof: added {what} to {output}\n")
    except (OSError, RuntimeError, ValueError) as error:
        sys.stderr.write(f"tfprof: {what} could not be added to {output} ({error}); it holds tfprof's "
                         "events only\n")
    finally:
        if os.path.exists(folded):
            os.remove(folded)
