"""An object read or set through an attribute no ``torch.Tensor`` has (``dataset.targets``) is
not a plain tensor: assigning its ``.data`` is an attribute store, not a write hidden from
autograd.

The tensor's attributes come from torch (the op table's ``tensor_attributes``, every public
name of ``torch.Tensor``); private names (``p._sharded``) do not count, since code tags
tensors with them. Every program is run with torch.
"""

from __future__ import annotations

from programs import codes, run

SUBSET = """
import torch


class Digits:
    def __init__(self):
        self.data = torch.arange(12.0).reshape(6, 2)
        self.targets = torch.arange(6)


def data_subset(dataset, subset, idx=0):
    step = len(dataset.data) // subset
    index = torch.arange(step * idx, step * (idx + 1))
    data = dataset.data[index]
    targets = dataset.targets[index]
    dataset.data = data
    dataset.targets = targets
    return dataset


train = data_subset(Digits(), 2)
"""

TENSOR = """
import torch


def shrink(h, keep):
    h.data = h.data.clamp(max=keep)
    h.tag = "shrunk"
    h._sharded = False
    return h.sum()


w = torch.randn(3, requires_grad=True)
h = w * 2
y = h * h
loss = shrink(h, 0.5) + y.sum()
loss.backward()
"""


def test_a_dataset_data_attribute_is_no_tensor_data() -> None:
    """snntorch's ``data_subset`` and ``valid_split`` (untuned run 12)."""
    assert codes(SUBSET) == []
    assert run(SUBSET)["train"].data.shape == (3, 2)


def test_a_parameter_with_tensor_attributes_is_still_written() -> None:
    """Private tags do not make a parameter foreign; a public one does, unless every caller
    passes a tensor for it (here ``w * 2``: callers are analysed first); a tensor tagged so
    and passed by no caller in the file is missed, the price of the rule."""
    assert codes(TENSOR.replace('    h.tag = "shrunk"\n', "")) == [(6, "IPL007")]
    assert codes(TENSOR) == [(6, "IPL007")]
    uncalled = TENSOR[: TENSOR.index("w = torch.randn")]
    assert codes(uncalled) == []
    run(TENSOR)


MODULE_LEVEL = """
import torch


def describe(h):
    return h.summary


w = torch.randn(3, requires_grad=True)
h = w * 2
y = h * h
h.data = torch.zeros(3)
y.sum().backward()
"""


def test_a_function_s_own_names_do_not_make_module_names_foreign() -> None:
    """``describe``'s parameter ``h`` is not the module's tensor ``h``."""
    assert codes(MODULE_LEVEL) == [(12, "IPL007")]
    run(MODULE_LEVEL)
