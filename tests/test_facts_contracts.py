"""Facts about declared contracts and grad levels that issue 18's measurements showed wrong.

Each test pairs the look-alike that must stay quiet with the hazard that must still be found.
"""

from __future__ import annotations

import textwrap

from inplace_lint.checks import all_rules
from inplace_lint.engine import lint_source

ALL = frozenset(rule.code for rule in all_rules())


def codes(source: str) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in lint_source(textwrap.dedent(source), "t.py", ALL)]


HELPER = '''
import torch


def clip_boxes(boxes, shape):
    """{doc}"""
    boxes[:, 0].clamp_(0, shape[1])
    boxes[:, 1].clamp_(0, shape[0])
    return torch.cat([boxes, boxes], 1)
'''


def test_a_helper_documented_to_work_in_place_is_not_reported_without_a_caller() -> None:
    assert codes(HELPER.format(doc="Clip bounding boxes to the image shape, in place.")) == []
    assert codes(HELPER.format(doc="Clip boxes (modified in-place).")) == []


def test_an_undocumented_or_denied_in_place_helper_still_is() -> None:
    assert codes(HELPER.format(doc="Clip bounding boxes to the image shape.")) == [
        (7, "IPL004"),
        (8, "IPL004"),
    ]
    assert codes(HELPER.format(doc="Clip boxes; the input is not in-place modified.")) == [
        (7, "IPL004"),
        (8, "IPL004"),
    ]


def test_a_documented_helper_still_harms_a_caller_whose_tensor_was_saved() -> None:
    source = HELPER.format(doc="Clip boxes in place.") + textwrap.dedent(
        """
        w = torch.randn(4, 4, requires_grad=True)
        boxes = w.exp()
        out = clip_boxes(boxes, (8, 8))
        out.sum().backward()
        """
    )
    assert (7, "IPL004") in codes(source)


def test_frozen_and_placeholder_parameters_are_not_grad_leaves() -> None:
    source = """
    import torch
    from torch import nn


    class M(nn.Module):
        def __init__(self, n, track):
            super().__init__()
            if track:
                self.register_buffer("stat", torch.zeros(n))
            else:
                self.register_parameter("stat", None)
            self.eps = nn.Parameter(torch.zeros(n), requires_grad=False)
            self.frozen = nn.Parameter(torch.zeros(n), False)
            self.register_parameter("late", nn.Parameter(torch.zeros(n), requires_grad=False))
            self.w = nn.Parameter(torch.ones(n))

        def forward(self, x):
            self.stat.mul_(0.9)
            self.eps.copy_(x.mean(0))
            self.frozen.zero_()
            self.late.add_(1)
            self.w.mul_(2)
            return x * self.w
    """
    assert codes(source) == [(23, "IPL003")]


def test_an_attribute_that_is_a_dict_on_one_path_is_not_written_by_a_key_store() -> None:
    source = """
    import torch
    from torch import nn


    class Explainer(nn.Module):
        def init_masks(self, x, hetero):
            if hetero:
                self.node_mask = {}
                for key in ("a", "b"):
                    self.init_node_mask(key)
            else:
                self.node_mask = nn.Parameter(torch.randn(3))

        def init_node_mask(self, key):
            self.node_mask[key] = nn.Parameter(torch.randn(3))

        def forward(self, x):
            self.node_mask.mul_(2)
            return x
    """
    assert codes(source) == [(19, "IPL003")]


def test_a_mapping_annotated_parameter_is_a_container() -> None:
    source = """
    from typing import MutableMapping

    import torch


    def convert(global_weights, local_var_dict: MutableMapping) -> tuple[MutableMapping, int]:
        for name in local_var_dict:
            weights = global_weights[name]
            weights = torch.reshape(torch.as_tensor(weights), local_var_dict[name].shape)
            local_var_dict[name] = weights
        return local_var_dict, len(local_var_dict)


    def scale(state: dict, name):
        state[name] *= 2
        return len(state)


    def train(net, weights, get_state_dict, check):
        local = get_state_dict(net)
        merged, n = convert(weights, local_var_dict=local)
        check(local, n)
        return scale(local, "w")
    """
    assert codes(source) == []


GLOBAL_LEAF = """
import torch
import torch.nn.functional as F

w = torch.randn(4, 4, requires_grad=True)
{rebind}

def f(x):
    {local}h = F.relu(x @ w)
    h.mul_(2)
    return h
"""


def test_a_function_sees_a_module_level_leaf_that_requires_grad() -> None:
    """``w`` is bound once at module level to a leaf that requires grad: inside ``f`` the
    product with it carries grad, and ``relu`` saves its output."""
    assert codes(GLOBAL_LEAF.format(rebind="", local="")) == [(10, "IPL001")]


def test_a_rebound_or_local_name_is_not_taken_for_the_module_leaf() -> None:
    # bound twice at module level: which value a call sees depends on when it runs
    assert codes(GLOBAL_LEAF.format(rebind="w = torch.randn(4, 4)", local="")) == []
    # bound in the function: Python makes it local there, whatever the module holds
    assert codes(GLOBAL_LEAF.format(rebind="", local="w = torch.eye(4)\n    ")) == []


SEQUENTIAL_FROM_LIST = """
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        layers = [nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.5, inplace=True), nn.Linear(8, 2)]
        {change}self.main = nn.Sequential(*layers)

    def forward(self, x):
        return self.main(x)
"""


def test_a_sequential_unpacking_a_fixed_literal_list_is_a_chain() -> None:
    assert codes(SEQUENTIAL_FROM_LIST.format(change="")) == [(9, "IPL001")]


def test_a_list_changed_before_the_unpacking_is_not_taken_as_written() -> None:
    # ``layers.pop(2)`` drops the dropout: the list no longer says what the chain holds
    assert codes(SEQUENTIAL_FROM_LIST.format(change="layers.pop(2)\n        ")) == []
    assert codes(SEQUENTIAL_FROM_LIST.format(change="layers[2] = nn.Identity()\n        ")) == []


def test_every_write_into_a_saved_output_is_reported() -> None:
    """Each write alone breaks the save; ``x += r`` then ``relu_(x)`` is one hazard."""
    source = """
    import torch

    w = torch.randn(2, 4, requires_grad=True)
    att = torch.relu(w * 2)
    att[:, 0] = 0
    att[:, -1] = 0
    att.mul_(3)
    att.sum().backward()
    """
    assert codes(source) == [(6, "IPL001"), (7, "IPL001"), (8, "IPL001")]


def test_the_input_of_a_torch_module_is_a_tensor_in_any_method() -> None:
    """In a helper method (not ``forward``) a parameter's kind is unknown, so ``x += y`` could
    rebind; once ``x`` went into ``nn.Conv1d`` it is a tensor, and the write is in place."""
    source = """
    import torch
    from torch import nn


    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(8, 8, 3, padding=1)

        def forward(self, x):
            return self.extract(x)

        def extract(self, x):
            y = self.conv(x)
            x += y
            return x
    """
    assert codes(source) == [(16, "IPL001")]
