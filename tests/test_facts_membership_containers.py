"""A parameter asked whether it holds a key (``n not in cache``) is a container, so a store
into it is no tensor write (untuned run 26, llm-compressor's FX tracer: a nested helper
filling its caller's proxy cache was reported as mutating a tensor argument). A number
asked of a parameter (``-1 in labels``) may be asked of a tensor and decides nothing. The
programs are run with torch.
"""

from __future__ import annotations

import pytest
from programs import codes, run

CACHE = """
import torch


def getattr_proxy(attr_val, names, cache):
    def maybe_proxy(attr_val, attr_to_name, cache):
        n = attr_to_name.get(attr_val)
        if n is None:
            return None
        {test}
            cache[n] = attr_val * 2
        return cache[n]

    first = maybe_proxy(attr_val, names, cache)
    again = maybe_proxy(attr_val, names, cache)
    return first, again, cache


weight = torch.ones(2)
first, again, cache = getattr_proxy(weight, {{weight: "w"}}, {{}})
"""

LABELS = """
import torch


def drop_padding(labels):
    if -1 in labels:
        labels[labels == -1] = 0
    return labels.sum()


labels = torch.tensor([1, -1, 2])
kept = labels.clone()
total = drop_padding(labels)
changed = not torch.equal(labels, kept)
"""


def test_a_store_into_a_parameter_asked_for_a_key_is_no_tensor_write() -> None:
    cached = CACHE.format(test="if n not in cache:")
    assert codes(cached) == []
    names = run(cached)
    assert names["first"] is names["again"]  # a dict of proxies, filled once
    # without the test nothing says what ``cache`` is: still judged as a tensor could be
    assert codes(CACHE.format(test="if True:")) == [(11, "IPL004")]


def test_a_number_asked_of_a_parameter_says_nothing() -> None:
    assert codes(LABELS) == [(7, "IPL004")]
    pytest.importorskip("torch")
    assert run(LABELS)["changed"]  # the caller's labels were rewritten
