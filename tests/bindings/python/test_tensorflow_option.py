"""tfprof.trace(tensorflow=True) where TensorFlow cannot be imported: a clear ImportError before
anything starts, and nothing left behind. (With the real TensorFlow it is tested in
tests/interop/test_xplane.py.)"""

import sys

import pytest

import tfprof


@pytest.fixture
def no_tensorflow(monkeypatch):
    # None in sys.modules makes `import tensorflow` raise ImportError, whatever is installed.
    monkeypatch.setitem(sys.modules, "tensorflow", None)


def test_without_tensorflow_start_says_what_to_install(no_tensorflow, tmp_path):
    path = tmp_path / "trace.json"
    session = tfprof.trace(path, tensorflow=True)
    with pytest.raises(ImportError, match=r"tensorflow=True.*needs TensorFlow.*pip install tensorflow"):
        session.start()
    assert not tfprof.is_running()
    assert not path.exists()
    assert session.notes == []
    # The with-block form fails the same way, and a plain session still works afterwards.
    with pytest.raises(ImportError):
        with tfprof.trace(path, tensorflow=True):
            pass
    with tfprof.trace(path):
        with tfprof.span("after"):
            pass
    assert path.exists()


def test_tensorflow_takes_a_bool():
    with pytest.raises(TypeError, match="tensorflow='yes' has type str; expected bool"):
        tfprof.trace(tensorflow="yes")


def test_merge_fold_takes_a_bool(tmp_path):
    with pytest.raises(TypeError, match="fold=1 has type int; expected bool"):
        tfprof.merge([tmp_path / "a.json"], tmp_path / "b.json", fold=1)
