"""Facts about framework and torch calls, each from the seventeenth session's untuned run 21:
a framework's ``backward(loss)`` wrapper (Accelerate, Lightning's ``manual_backward``) is a
backward of the tensor it is given; ``p.requires_grad = False`` over ``module.parameters()``
freezes the module; ``torch.init.normal_`` is nothing torch has; ``out=`` of an op without a
gradient (``nonzero``) takes any input. Every program is run with torch.
"""

from __future__ import annotations

import pytest
from programs import behave, codes, run

WRAPPED = """
import torch
import torch.nn as nn

torch.manual_seed(0)


class Accelerator:
    def backward(self, loss, **kwargs):
        loss.backward(**kwargs)


def train_step(model, optimizer, accelerator, x):
    h = model(x)
    accelerator.backward(h.sum(), retain_graph=True)
    {first}
    accelerator.backward((h * h).sum())
    {second}


def main():
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_step(model, optimizer, Accelerator(), torch.randn(5, 3))


main()
"""


@pytest.mark.parametrize("method", ["backward", "manual_backward"])
def test_a_backward_wrapper_differentiates_the_tensor_it_is_given(method: str) -> None:
    """Accelerate's ``accelerator.backward(loss)``, Lightning's ``self.manual_backward``."""
    source = WRAPPED.replace("def backward(", f"def {method}(").replace(
        "accelerator.backward(", f"accelerator.{method}("
    )
    hazard = source.format(first="optimizer.step()", second="")
    safe = source.format(first="", second="optimizer.step()")
    assert codes(hazard) == [(16, "IPL001")]
    assert codes(safe) == []
    behave(hazard, safe)


FROZEN = """
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DeepCluster(nn.Module):
    def __init__(self, dim=4, num_prototypes=(3, 5)):
        super().__init__()
        self.prototypes = nn.ModuleList([nn.Linear(dim, n, bias=False) for n in num_prototypes])
        for proto in self.prototypes:
            for params in proto.parameters():
                params.requires_grad = {flag}
            proto.weight.copy_(F.normalize(proto.weight.data.clone(), dim=-1))


model = DeepCluster()
"""


def test_requires_grad_set_off_over_a_modules_parameters_freezes_it() -> None:
    hazard, safe = FROZEN.format(flag="True"), FROZEN.format(flag="False")
    assert codes(hazard) == [(16, "IPL003")]
    assert codes(safe) == []
    behave(hazard, safe, match="a leaf Variable that requires grad")


def test_an_inplace_looking_name_outside_torchs_namespaces_is_no_torch_op() -> None:
    """braindecode's ``torch.init.normal_``: torch has no ``torch.init``."""
    source = """
import torch
import torch.nn as nn

embeddings = nn.Embedding(4, 3)
torch.init.normal_(embeddings.weight, std=2.0)
"""
    assert codes(source) == []
    pytest.importorskip("torch")
    with pytest.raises(AttributeError):
        run(source)


OUT_OF = """
import torch

features = torch.randn(6, requires_grad=True)
large_enough = torch.empty(6, dtype={dtype})
found = torch.{op}(features, out=large_enough)
"""


def test_out_of_an_op_whose_result_never_requires_grad_is_no_autograd_error() -> None:
    """hippynn's ``torch.nonzero(mask, out=buffer)``: ``nonzero`` has no gradient, so torch
    takes ``out=`` whatever its input requires."""
    safe = OUT_OF.format(op="nonzero", dtype="torch.int64")
    hazard = OUT_OF.format(op="sigmoid", dtype="torch.float32")
    assert codes(safe) == []
    assert codes(hazard) == [(6, "IPL001")]
    behave(hazard, safe, match="out=... arguments don't support automatic differentiation")
