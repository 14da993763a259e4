"""The shared child-list cache is keyed by node id, so it may only hold trees that outlive
it: a tree parsed and freed inside it (another file's helper, summarised in project mode)
would leave entries a later node could take over with a reused id. ``unshared`` keeps such
trees out of it."""

from __future__ import annotations

import libcst as cst

from inplace_lint.facts import walk


def test_a_tree_walked_while_unshared_leaves_nothing_in_the_shared_cache() -> None:
    kept = cst.parse_module("y = f(2)\n")
    with walk.shared_children():
        walk.children_of(kept)
        with walk.unshared():
            passing = cst.parse_module("def g(x):\n    x.add_(1)\n")
            assert list(walk.walk(passing))
        assert walk._shared is not None
        assert set(walk._shared) == {id(kept)}
    assert walk._shared is None
