"""An op keeps an operand for another operand's gradient only when that one needs grad, and a
module method's own tensor parameter needs grad only by assumption (untuned run 29,
TopoModelX's Chebyshev convolution: ``X[:, :, k] = torch.mm(L, X[:, :, k - 1])`` keeps the
slice only for the Laplacian's gradient, and the Laplacians are data). A later call passing a
tensor known to need grad makes the method's saves real again (``forward`` handing
``self.fc(x)`` to a helper method defined above it). ``einsum``'s operands are each an input.
The programs are run with torch.
"""

from __future__ import annotations

from programs import behave, codes, run

CHEBYSHEV = """
import torch
from torch import nn


class SCNNLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(4, 3, 2))
        self.learned = nn.Parameter(torch.eye(5))

    def aggr_norm_func(self, conv_operator, x):
        neighborhood_size = torch.sum(conv_operator, dim=1)
        neighborhood_size_inv = 1 / neighborhood_size
        neighborhood_size_inv[~(torch.isfinite(neighborhood_size_inv))] = 0
        x = torch.einsum("i,ij->ij", neighborhood_size_inv, x)
        return x

    def chebyshev_conv(self, conv_operator, conv_order, x):
        num_simplices, num_channels = x.shape
        X = torch.empty(size=(num_simplices, num_channels, conv_order))
        X[:, :, 0] = torch.mm(conv_operator, x)
        for k in range(1, conv_order):
            X[:, :, k] = torch.mm(conv_operator, X[:, :, k - 1])
            X[:, :, k] = self.aggr_norm_func(conv_operator, X[:, :, k])
        return X

    def forward(self, x, laplacian):
        x = self.chebyshev_conv({operator}, 2, x)
        return torch.einsum("nik,iok->no", x, self.weight)


torch.manual_seed(0)
features = torch.randn(5, 4, requires_grad=True)
laplacian = torch.rand(5, 5) + 0.1
SCNNLayer()(features, laplacian).sum().backward()
"""


def test_an_operand_kept_only_for_an_assumed_operands_gradient_is_not_saved() -> None:
    data = CHEBYSHEV.format(operator="laplacian")
    assert codes(data) == []
    learned = CHEBYSHEV.format(operator="self.learned")  # a parameter: its gradient is real
    assert codes(learned) == [(24, "IPL001"), (25, "IPL001")]
    behave(learned, data)


HELPER_FIRST = """
import torch
from torch import nn


class SelectedUnitsHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.key_fc = nn.Linear(4, 4)

    def _query(self, key_embeddings, one_hot):
        picked = (key_embeddings * one_hot).sum()
        one_hot[0] = 1
        return picked + (key_embeddings * one_hot).sum()

    def forward(self, entities):
        one_hot = torch.zeros(3, 4)
        return self._query({keys}, one_hot)


torch.manual_seed(0)
SelectedUnitsHead()(torch.randn(3, 4)).backward()
"""


def test_a_later_call_passing_a_tensor_that_needs_grad_makes_the_save_real() -> None:
    hazard = HELPER_FIRST.format(keys="self.key_fc(entities)")
    assert codes(hazard) == [(13, "IPL001")]
    behave(hazard)


SCALED = """
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.scale = nn.Parameter(torch.ones(4))

    def forward(self, x):
        h = self.fc(x)
        inv = {inv}
        y = torch.einsum("i,ij->ij", inv, h)
        h.add_(1)
        return y.sum() + h.sum()


torch.manual_seed(0)
out = Block()(torch.randn(4, 3))
out.backward()
"""


def test_each_einsum_operand_is_kept_for_the_others_gradients() -> None:
    constant = SCALED.format(inv="1 / torch.arange(1.0, 5.0)")
    assert codes(constant) == []
    learned = SCALED.format(inv="self.scale")
    assert codes(learned) == [(16, "IPL001")]
    behave(learned, constant)
    assert run(constant)["out"] is not None
