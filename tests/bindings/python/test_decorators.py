"""@tfprof.span in its forms: bare, named, on methods; what the wrapper keeps from the function."""

import functools
import inspect
import operator
import pickle

import pytest

import decorated_module
import tfprof
from trace_file import encloses, only, read_trace


@tfprof.span
def load_batch(size, *, scale=1):
    """Loads a batch."""
    return [scale] * size


@tfprof.span("preprocess")
def preprocess(batch):
    with tfprof.span("normalize"):
        return [value * 2 for value in batch]


class Model:
    def __init__(self):
        self.calls = 0

    @tfprof.span
    def forward(self, value):
        self.calls += 1
        return value + 1

    @tfprof.span("Model.static")
    @staticmethod
    def static(value):
        return -value

    @classmethod
    @tfprof.span
    def build(cls):
        return cls()

    @tfprof.span
    @classmethod
    def build_above(cls):
        return cls()

    # Callables that are not functions never bind: stored on a class they get no `self`.
    length = tfprof.span("len")(len)
    add_one = tfprof.span("add_one")(functools.partial(operator.add, 1))


def test_bare_decorator_uses_the_qualified_name_and_named_form_the_given_name(tmp_path):
    path = tmp_path / "decorated.json"
    with tfprof.trace(path):
        assert preprocess(load_batch(3, scale=5)) == [10, 10, 10]
    parsed = read_trace(path)
    assert parsed.span_names() == ["load_batch", "normalize", "preprocess"]
    assert encloses(only(parsed.spans(), "preprocess"), only(parsed.spans(), "normalize"))


def test_methods_bind_self_and_are_named_by_qualified_name(tmp_path):
    path = tmp_path / "methods.json"
    with tfprof.trace(path):
        model = Model.build()
        assert model.forward(1) == 2
        assert Model.forward(model, 2) == 3
        assert model.static(4) == -4 and Model.static(5) == -5
        assert isinstance(Model.build_above(), Model)
        assert model.length([1, 2]) == 2 and Model.length("abc") == 3
        assert model.add_one(1) == 2
    assert model.calls == 2
    names = read_trace(path).span_names()
    assert names == ["Model.build", "Model.build_above", "Model.forward", "Model.forward", "Model.static",
                     "Model.static", "add_one", "len", "len"]


def test_the_wrapper_looks_like_the_function():
    assert load_batch.__name__ == "load_batch"
    assert load_batch.__qualname__ == "load_batch"
    assert load_batch.__doc__ == "Loads a batch."
    assert load_batch.__module__ == __name__
    assert load_batch.__wrapped__.__name__ == "load_batch"
    assert str(inspect.signature(load_batch)) == "(size, *, scale=1)"
    assert load_batch.span_name == "load_batch" and preprocess.span_name == "preprocess"
    assert Model.forward.__qualname__ == "Model.forward"


def test_an_exception_in_a_decorated_function_closes_its_span_and_propagates(tmp_path):
    error = ValueError("bad sample")

    @tfprof.span
    def fails():
        with tfprof.span("inside"):
            raise error

    path = tmp_path / "raises.json"
    with tfprof.trace(path):
        with pytest.raises(ValueError) as raised:
            fails()
        assert raised.value is error
        with tfprof.span("next"):
            pass
    parsed = read_trace(path)
    spans = parsed.spans()
    name = "test_an_exception_in_a_decorated_function_closes_its_span_and_propagates.<locals>.fails"
    assert encloses(only(spans, name), only(spans, "inside"))
    assert not encloses(only(spans, name), only(spans, "next"))
    assert parsed.raw["tfprof"]["unmatched_span_ends"] == 0


def test_decorated_functions_work_with_no_trace_running():
    assert load_batch(2) == [1, 1]
    assert Model().forward(0) == 1


def test_decorated_module_functions_and_spans_pickle(tmp_path):
    assert pickle.loads(pickle.dumps(decorated_module.square)) is decorated_module.square
    assert pickle.loads(pickle.dumps(decorated_module.cube))(2) == 8
    assert pickle.loads(pickle.dumps(tfprof.span("load"))).name == "load"


def test_a_str_subclass_name_is_stored_as_a_plain_str():
    class Name(str):
        pass

    span = tfprof.span(Name("subclassed"))
    assert type(span.name) is str and span.name == "subclassed"


def test_decorating_coroutines_generators_and_classes_is_refused_with_a_reason():
    async def coroutine():
        pass

    def generator():
        yield 1

    with pytest.raises(TypeError, match="coroutine function .*coroutine.*interleave"):
        tfprof.span(coroutine)
    with pytest.raises(TypeError, match="generator function"):
        tfprof.span("gen")(generator)
    with pytest.raises(TypeError, match="class Model"):
        tfprof.span(Model)


def test_bad_span_arguments_raise_clear_errors():
    with pytest.raises(TypeError, match="takes a name .* or a function"):
        tfprof.span(42)
    with pytest.raises(TypeError, match="one argument"):
        tfprof.span()
    with pytest.raises(TypeError, match="one argument"):
        tfprof.span("a", "b")
    with pytest.raises(ValueError, match="NUL"):
        tfprof.span("a\0b")
    with pytest.raises(UnicodeEncodeError):
        tfprof.span("\udcff")
    with pytest.raises(TypeError, match="decorates functions"):
        tfprof.span("x")(3)
    assert tfprof.span(name="keyword").name == "keyword"
    with pytest.raises(TypeError, match="name must be a str"):
        tfprof.instant(b"bytes")
    with pytest.raises(TypeError, match="must be a number"):
        tfprof.counter("c", "three")
    with pytest.raises(OverflowError):
        tfprof.counter("c", 2**2000)
    with pytest.raises(TypeError, match="must be an int"):
        tfprof.step(1.5)
