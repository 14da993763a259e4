"""Two facts about values a module hands back (round 29's OpenNMT decoder, round 20's copy of
it): an element of a same-file module's tuple result that an op of its forward saved as its
output (``return attn_h, attn`` after ``attn = F.softmax(align)``) is saved for the caller
too; and ``rows += [x]`` extends the list in place, so every name and dict entry holding that
list holds ``x`` (``attns["std"] += [coverage]``, then ``return outputs, attns``). The
programs are run with torch.
"""

from __future__ import annotations

from programs import behave, codes

DECODER = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class GlobalAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.linear_out = nn.Linear(dim * 2, dim, bias=False)

    def forward(self, input, context):
        align = torch.bmm(context, input.unsqueeze(2)).squeeze(2)
        attn = F.softmax(align, dim=-1)
        c = torch.bmm(attn.unsqueeze(1), context).squeeze(1)
        return torch.tanh(self.linear_out(torch.cat([c, input], 1))), attn


class Decoder(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.attn = GlobalAttention(dim)

    def forward(self, steps, context):
        attns = {{"std": [], "coverage": []}}
        outputs = []
        for step in steps:
            output, attn = self.attn(step, context)
            outputs += [output]
            attns["std"] += [attn]
            {coverage}
            attns["coverage"] += [coverage]
        return torch.stack(outputs), {{k: torch.stack(v) for k, v in attns.items()}}


torch.manual_seed(0)
context = torch.randn(3, 5, 4, requires_grad=True)
decoder = Decoder(4)
outputs, attns = decoder(torch.randn(2, 3, 4).unbind(0), context)
(outputs.sum() + torch.min(attns["std"], attns["coverage"]).sum()).backward()
"""


def test_a_saved_element_of_a_tuple_result_written_in_place() -> None:
    hazard = DECODER.format(coverage="coverage = attn\n            coverage += attn")
    safe = DECODER.format(coverage="coverage = attn + attn")
    assert codes(hazard) == [(32, "IPL001")]
    assert codes(safe) == []
    behave(hazard, safe)


LISTS = """
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        kept = {{"rows": []}}
        y = self.lin(x).sigmoid()
        {keep}
        y.mul_(2)
        return kept


torch.manual_seed(0)
kept = Head()(torch.randn(2, 3))
kept["rows"][0].sum().backward()
"""


def test_a_list_extended_in_place_holds_the_tensor_for_every_alias() -> None:
    for keep in ('kept["rows"] += [y]', 'rows = kept["rows"]\n        rows += [y]'):
        hazard = LISTS.format(keep=keep)
        assert codes(hazard) == [(15 + keep.count("\n"), "IPL001")], keep
        behave(hazard)
    # a tuple's ``+=`` makes a new tuple: the dict still holds the old, empty one
    tuple_grown = 'rows = ()\n        rows += (y,)\n        kept["rows"] = [y.detach()]'
    fresh = LISTS.format(keep=tuple_grown)
    assert codes(fresh) == []


def test_a_saved_element_when_the_forward_is_not_interpreted_at_the_call() -> None:
    # ``*args`` keeps the forward from being interpreted with this call's values: what its
    # own analysis found saved at each position of its tuple still holds
    starred = DECODER.replace("self.attn(step, context)", "self.attn(*(step, context))")
    hazard = starred.format(coverage="coverage = attn\n            coverage += attn")
    assert codes(hazard) == [(32, "IPL001")]
    behave(hazard)
