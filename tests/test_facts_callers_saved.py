"""A same-file helper that writes, in place, a tensor its caller passed after an op of the
caller saved it breaks the caller's backward: IPL001 on the helper's write, which names the
call (the argument mutation, IPL004, is the quieter fact of the same write). Every program is
run with torch.
"""

from __future__ import annotations

from programs import behave, codes, run

HELPER = """
import torch


def standardize_(t):
    t.sub_(t.mean(dim=0, keepdim=True))
    return t


def main():
    w = torch.randn(4, 3, requires_grad=True)
    probs = torch.sigmoid(w)
    standardize_(probs)
    probs.sum().backward()


main()
"""


def test_a_helper_writing_its_callers_saved_tensor_is_ipl001() -> None:
    """The helper mutates its argument, but the failure is the broken backward: IPL001 on
    the helper's write (the authors of rounds 6-19 marked it so, 15 files)."""
    assert codes(HELPER) == [(6, "IPL001")]
    behave(HELPER)


DENSE = """
import torch


class DenseConv(torch.nn.Module):
    def __init__(self, dim=3):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(dim, dim))

    def forward(self, x, adj):
        adj = adj.unsqueeze(0) if adj.dim() == 2 else adj
        n = adj.size(-1)
        idx = torch.arange(n)
        {loop}
        return torch.matmul(torch.matmul(adj, x), self.weight)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = DenseConv()
        self.conv2 = DenseConv()

    def forward(self, x, adj):
        return self.conv2(self.conv1(x, adj), adj)


adj = (torch.rand(2, 4, 4) > 0.5).float()
Net()(torch.randn(2, 4, 3, requires_grad=True), adj).sum().backward()
"""


def test_a_forward_argument_kept_for_backward_and_written_by_the_next_call() -> None:
    """PyG's DenseSAGEConv (round 20): the first conv's ``adj @ x`` keeps ``adj``; the second
    conv adds self-loops into the same ``adj`` (a conditional view of the parameter is still
    the caller's tensor). ``adj`` is kept only for ``x``'s gradient, and ``x`` is a raw input
    of both forwards, whose grad is an assumption (test_facts_assumed_operands): the write is
    reported as the argument mutation it is for certain, not as the broken backward."""
    hazard = DENSE.format(loop="adj[:, idx, idx] = 1")
    safe = DENSE.format(loop="adj = adj.clone()\n        adj[:, idx, idx] = 1")
    assert codes(hazard) == [(14, "IPL004")]
    assert codes(safe) == []
    behave(hazard, safe)


HIDDEN = """
import torch


def parse_output(outputs, mask):
    outputs[0].data.masked_fill_(mask, 0.0)
    return outputs


def main():
    w = torch.randn(3, 4, requires_grad=True)
    mel = torch.sigmoid(w)
    mask = torch.rand(3, 4) > 0.5
    parsed = parse_output([mel], mask)
    parsed[0].sum().backward()
    return w.grad


main()
"""


def test_a_helpers_write_through_data_stays_ipl007() -> None:
    """Through ``.data`` no version counter moves: backward does not fail, the gradients are
    silently wrong (IPL007), so a helper's hidden write of a saved tensor is not IPL001."""
    assert [code for _, code in codes(HIDDEN)] == ["IPL007"]
    run(HIDDEN)
