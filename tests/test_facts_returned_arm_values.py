"""A helper returns a tensor that an op saved only on the arm where the name was rebound
away from it (nnunet's ``get_tp_fp_fn_tn``: ``if square: tp = tp ** 2`` saves the product and
returns the square; otherwise the product, which nothing saved). The caller holds each returned
tensor on the arms that left it there, through a returned tuple and through a helper that may
hand its argument back (``tp = sum_tensor(tp, axes)``), so its in-place write to the result
does not meet the save made on the other arm. A save made on the arm the tensor is returned on
(``tp = tp.exp()``, which keeps its result) is still found. The programs run with torch.
"""

from __future__ import annotations

import pytest
from programs import IN_PLACE_ERROR, codes, run

HELPER = """
import torch


def sum_tensor(inp, axes):
    for ax in sorted(axes, reverse=True):
        inp = inp.sum(int(ax))
    return inp


def get_tp_fp(x, y, axes, square):
    tp = x * y
    fp = x * (1 - y)
    if square:
        tp = tp {op}
        fp = fp {op}
    if len(axes) > 0:
        tp = sum_tensor(tp, axes)
        fp = sum_tensor(fp, axes)
    return tp, fp


class Loss(torch.nn.Module):
    def forward(self, x, y):
        tp, fp = get_tp_fp(x, y, {axes}, {square})
        tp /= 4
        fp /= 4
        return (tp + fp).sum()


w = torch.randn(2, 3, requires_grad=True)
Loss()(w.sigmoid(), torch.rand(2, 3)).backward()
"""


@pytest.mark.parametrize("axes", ["[1]", "[]"])
@pytest.mark.parametrize("square", ["False", "True"])
def test_a_save_on_the_arm_that_rebound_the_name_is_not_the_callers(axes: str, square: str) -> None:
    source = HELPER.format(op="** 2", axes=axes, square=square)
    assert codes(source) == []
    run(source)


def test_a_save_on_the_arm_the_tensor_is_returned_on_is_found() -> None:
    source = HELPER.format(op=".exp()", axes="[]", square="True")
    assert [code for _, code in codes(source)] == ["IPL001", "IPL001"]
    with pytest.raises(RuntimeError, match=IN_PLACE_ERROR):
        run(source)
