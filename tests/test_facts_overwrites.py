"""Writes that replace a tensor's values whole read nothing of the old ones (``x.copy_(y)``,
``x.fill_(v)``, ``x.zero_()``, ``x.normal_()``, ``f(..., out=x)``): they are not a stale read
of an earlier in-place write.

Which in-place methods overwrite is probed from torch by the generator (the op table's
``overwrites``: the result is the same whatever ``self`` held). Reads by any other call are
judged as before. Every program is run with torch.
"""

from __future__ import annotations

import torch
from programs import codes, run

from inplace_lint.facts.ops import load_table

OVERWRITTEN = """
import torch


def tridiag_step(prev_beta, beta, prev_alpha, t_mat):
    torch.mul(prev_beta.sqrt_(), prev_alpha, out=t_mat[1])
    prev_beta.{overwrite}
    return t_mat


prev_beta = torch.rand(3)
beta = torch.rand(3)
t_mat = tridiag_step(prev_beta, beta, torch.rand(3), torch.zeros(2, 3))
"""

RETRIED_INTO_ONE_BUFFER = """
import torch


def cholesky(a, out):
    factor, info = torch.linalg.cholesky_ex(a, out=out)
    if info.any():
        factor, info = torch.linalg.cholesky_ex(a + 1e-3 * torch.eye(3), out=out)
    return factor


a = torch.eye(3) * 2
out = (torch.empty(3, 3), torch.empty((), dtype=torch.int32))
factor = cholesky(a, out)
"""

READ_AFTER_ALL = """
import torch


def tridiag_step(prev_beta, beta, prev_alpha, t_mat):
    torch.mul(prev_beta.sqrt_(), prev_alpha, out=t_mat[1])
    prev_beta.add_(beta)
    return t_mat


prev_beta = torch.rand(3)
t_mat = tridiag_step(prev_beta, torch.rand(3), torch.rand(3), torch.zeros(2, 3))
"""

DATA_COPY = """
import torch

param = torch.rand(3, 3)
p = param
param.mul_(2)
p.data.copy_(torch.eye(3))
"""


def test_an_overwrite_after_an_inplace_result_used_as_new_is_no_read() -> None:
    """linear-operator's CG (untuned run 12): ``prev_beta.sqrt_()`` feeds a product, then
    ``prev_beta.copy_(beta)`` replaces it for the next step."""
    for overwrite in ("copy_(beta)", "fill_(0.5)", "zero_()", "normal_()"):
        source = OVERWRITTEN.format(overwrite=overwrite)
        assert codes(source) == [], overwrite
        run(source)


def test_a_reading_inplace_op_is_still_a_read() -> None:
    assert codes(READ_AFTER_ALL) == [(6, "IPL002")]
    run(READ_AFTER_ALL)


def test_an_out_buffer_written_again_is_no_read() -> None:
    """linear-operator's cholesky retry writes the same ``out`` buffer twice."""
    assert codes(RETRIED_INTO_ONE_BUFFER) == []
    assert run(RETRIED_INTO_ONE_BUFFER)["factor"].shape == (3, 3)


def test_a_data_copy_overwrites_the_tensor_behind_it() -> None:
    """brevitas' Cayley SGD: ``param.copy_(p_new)`` then ``p.data.copy_(...)``."""
    assert codes(DATA_COPY) == []
    assert run(DATA_COPY)["param"].equal(torch.eye(3))


def test_the_table_lists_what_torch_overwrites() -> None:
    found = load_table().overwrites
    assert {"copy_", "fill_", "zero_", "normal_", "uniform_", "bernoulli_"} <= found
    assert not found & {"add_", "mul_", "masked_fill_", "index_fill_", "eq_", "clamp_", "resize_"}
