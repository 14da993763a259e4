"""Storage torch leaves uninitialized (``torch.empty``, ``empty_like``, ``new_empty``): its
first values are written by the code that fills it, so no read of the old ones is stale.

Which factories and methods return uninitialized data comes from torch's own docstrings (the
op table's ``uninitialized``). Once the storage is written whole it holds values, and later
writes are judged as any other. Every program is run with torch.
"""

from __future__ import annotations

from programs import codes, run

FILLED_BY_A_HELPER = """
import torch


def transform_block(x, out):
    torch.mul(x, 2, out=out)
    out.add_(1)


x = torch.randn(8)
out = {factory}
for start in range(0, 8, 4):
    out_block = out[start : start + 4]
    work = out_block
    transform_block(x[start : start + 4], work)
    kept = out_block.clone()
"""

WRITTEN_WHOLE_THEN_AGAIN = """
import torch

x = torch.randn(4)
buf = torch.empty(4)
buf.copy_(x)
view = buf[:2]
before = view.clone()
buf.mul_(2)
y = view.sum()
"""


def test_a_helper_filling_uninitialized_blocks_makes_no_read_stale() -> None:
    """tabpfn's blockwise transform (untuned run 9): ``_transform_block(x, out)`` writes each
    block of ``torch.empty_like(x)`` through a view the caller then copies from."""
    for factory in ("torch.empty_like(x)", "x.new_empty(8)", "torch.empty(8)"):
        source = FILLED_BY_A_HELPER.format(factory=factory)
        assert codes(source) == [], factory
        run(source)


def test_storage_written_whole_is_judged_as_any_other() -> None:
    """``buf.copy_(x)`` gives the buffer its values; ``buf.mul_(2)`` then changes what
    ``view`` shows."""
    assert codes(WRITTEN_WHOLE_THEN_AGAIN) == [(9, "IPL002")]
    scope = run(WRITTEN_WHOLE_THEN_AGAIN)
    assert not scope["before"].equal(scope["buf"][:2])  # ``view`` changed behind its name


def test_the_table_names_what_torch_documents_as_uninitialized() -> None:
    from inplace_lint.facts.ops import load_table

    found = load_table().uninitialized
    assert {"torch.empty", "torch.empty_like", "new_empty"} <= found
    assert "torch.zeros" not in found
