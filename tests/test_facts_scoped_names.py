"""A call by a bare name reaches the function of that name in its own scope, not another
function's nested namesake (untuned run 27, lightning-thunder's tests: each test's nested
``def f`` was judged by the calls of another test's ``f``). The programs are run with torch.
"""

from __future__ import annotations

from programs import codes, run

TESTS = """
import torch


def test_add():
    def f(a, b):
        return a + b

    x = torch.randn(3)
    kept = x.clone()
    out = f(x, x)
    add_changed = not torch.equal(x, kept)
    return out, x * 2, add_changed


def test_fusion_break():
    def f(x):
        x.add_(1)
        return x.sum()

    y = torch.randn(3)
    {call}


add_result = test_add()
"""


def test_a_call_reaches_the_nested_function_of_its_own_scope() -> None:
    # ``f(x, x)`` in test_add calls test_add's own ``f``, which writes nothing
    other = TESTS.format(call="return f(y.clone())")
    assert codes(other) == []
    assert run(other)["add_result"][2] is False  # the caller's x is unchanged
    # the writing ``f`` is still judged at its own callers
    own = TESTS.format(call="total = f(y)\n    return total, y * 2")
    assert codes(own) == [(18, "IPL004")]
