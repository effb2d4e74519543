"""The kill matrix, CI-sized: streamed outputs of each format SIGKILLed at random moments must
load with `tfprof summary` and hold only whole steps (tests/kill/kill_matrix.py; its full run of
hundreds of kills per format is recorded in benchmarks/RESULTS.md)."""

from __future__ import annotations

import pathlib
import sys

import pytest

from conftest import build_dir

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "kill"))
import kill_matrix  # noqa: E402  (found through the path above)


@pytest.mark.parametrize("form", sorted(kill_matrix.FORMATS))
def test_killed_streams_load_with_whole_steps(form, tfprof_exe, tmp_path):
    program = build_dir() / "tests" / "kill" / "stream_steps"
    if not program.exists():
        pytest.fail(f"{program} is missing: build the tree first")
    outcomes = [kill_matrix.run_once(program, tfprof_exe, form, 16, delay_ms / 1000, run % 2 == 1,
                                     tmp_path)
                for run, delay_ms in enumerate((0, 1, 2, 3, 5, 8, 12, 16, 20, 25))]
    failures = [outcome.failure for outcome in outcomes if outcome.failure]
    assert not failures, failures
    # The kills came after files were named (else nothing was tested).
    assert sum(outcome.file_left for outcome in outcomes) >= 5
    assert sum(outcome.steps for outcome in outcomes) > 0
