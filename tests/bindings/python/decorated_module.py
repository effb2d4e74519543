"""Module-level decorated functions for the pickling and multiprocessing tests."""

import tfprof


@tfprof.span
def square(value):
    return value * value


@tfprof.span("named_cube")
def cube(value):
    return value**3
