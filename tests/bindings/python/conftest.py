import pathlib
import sys

import pytest

import tfprof

sys.path.insert(0, str(pathlib.Path(__file__).parent))


@pytest.fixture(autouse=True)
def no_session_left_running():
    """Each test starts with no session and must not leave one running."""
    assert not tfprof.is_running(), "a previous test left a session running"
    yield
    if tfprof.is_running():
        tfprof._trace._latest.stop()  # type: ignore[union-attr]
        pytest.fail("the test left a session running")
