"""A local alias of a parameter bound on one arm of a branch and rebound on another holds
the caller's tensor on the paths where it was not rebound (pytorch-forecasting's DeepAR:
``if reals: input_vector = x_cont`` then ``if reals and cats: input_vector = torch.cat(...)``
before ``input_vector[..., t] = roll(...)``), so its write reaches the caller there. Where the
alias was made under a ``None`` test of another parameter, a write under the opposite test
never reaches it (``if cache is None: state = x`` ... ``if cache is not None:
state.zero_()``), and a write under no test happens only on the alias's path, which a call
passing a tensor there does not take. An entry of a mapping a helper wrote
(``self.civ(x["cont"])``) is the entry a later ``x["cont"]`` reads, unless the function put a
new tensor there first (torch-optimi's ``state["exp_avg"] = g.clone()`` then ``.add_()``). An
alias made in one arm of a branch is none in the next arm (physicsnemo's ``scatter_v_wrapper``
filling its own list there). The programs run with torch.
"""

from __future__ import annotations

from programs import codes, run

DEEPAR = """
import torch


def construct_input_vector(x_cat, x_cont, reals, cats):
    if reals:
        input_vector = x_cont
    if reals and cats:
        input_vector = torch.cat([x_cont, x_cat], dim=-1)
    input_vector[..., 0] = torch.roll(input_vector[..., 0], shifts=1, dims=1)
    return input_vector


x_cont = torch.arange(6.0).view(1, 3, 2)
x_cat = torch.zeros(1, 3, 1)
vector = construct_input_vector(x_cat, {passed}, True, {cats})
first = x_cont[0, 0, 0] * 1.0
"""

CACHED = """
import torch


def step(x, cache=None):
    if cache is None:
        state = x
    else:
        state = x.clone()
    out = torch.tanh(state)
    {write}
    return out


x = torch.randn(3)
before = x.clone()
out = step(x, {cache})
kept = x.clone()
"""

ITEMS = """
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)

    def civ(self, x_cont):
        x_cont[..., 0] = torch.roll(x_cont[..., 0], shifts=1, dims=1)
        return x_cont

    def forward(self, x):
        h = self.lin(self.civ({passed}))
        last = x["encoder_cont"][:, -1]
        return h.sum() + last.sum()


torch.manual_seed(0)
out = M()({{"encoder_cont": torch.arange(12.0).view(2, 3, 2)}})
"""


def test_an_alias_rebound_on_one_arm_writes_the_caller_on_the_other() -> None:
    hazard = DEEPAR.format(passed="x_cont", cats="False")
    assert codes(hazard) == [(10, "IPL004")]
    assert run(hazard)["first"] != 0.0  # type: ignore[operator]  # the caller's series rolled
    safe = DEEPAR.format(passed="x_cont.clone()", cats="False")
    assert codes(safe) == [] and run(safe)["first"] == 0.0  # type: ignore[operator]


def test_an_alias_made_on_one_none_test_outcome_follows_that_test() -> None:
    under_opposite = CACHED.format(write="if cache is not None:\n        state.zero_()", cache="[]")
    assert codes(under_opposite) == []
    scope = run(under_opposite)
    assert scope["kept"].equal(scope["before"])  # type: ignore[attr-defined]
    unguarded = CACHED.format(write="state.zero_()", cache="{}")
    assert codes(unguarded) == []  # a dict is no None: the clone is written
    scope = run(unguarded)
    assert scope["kept"].equal(scope["before"])  # type: ignore[attr-defined]
    bitten = CACHED.format(write="state.zero_()", cache="None")
    assert codes(bitten) == [(11, "IPL004")]
    scope = run(bitten)
    assert not scope["kept"].equal(scope["before"])  # type: ignore[attr-defined]


def test_an_entry_a_helper_wrote_is_the_entry_read_again() -> None:
    hazard = ITEMS.format(passed='x["encoder_cont"]')
    assert codes(hazard) == [(12, "IPL004")]
    twin = run(hazard.replace("x_cont[..., 0] = ", "x_cont = x_cont.clone(); x_cont[..., 0] = "))
    assert not run(hazard)["out"].equal(twin["out"])  # type: ignore[attr-defined]
    safe = ITEMS.format(passed='x["encoder_cont"].clone()')
    assert codes(safe) == []


STATE = """
import torch


def init_state(state, param):
    if "exp_avg" not in state:
        state["exp_avg"] = param.detach().clone()
        state["exp_avg"].mul_(0.5)


def collect(states, param, out):
    state = states["p"]
    init_state(state, param)
    out.append(state["exp_avg"])


param = torch.ones(3)
states = {"p": {}}
out = []
collect(states, param, out)
kept = out[0] * 1.0
"""

SPLIT = """
import torch


def scatter(tensor, rank, src):
    x_send = [None, None]
    if rank == src:
        scatter_list = torch.split(tensor, [2, 1])
        scatter_list = [t.contiguous() for t in scatter_list]
        x_send = scatter_list
    else:
        x_send[0] = torch.empty(0)
    return x_send


tensor = torch.arange(3.0)
sent = scatter(tensor, 1, 0)
again = tensor * 1.0
"""


def test_an_entry_the_function_put_there_is_its_own_tensor() -> None:
    assert codes(STATE) == []
    scope = run(STATE)
    assert scope["kept"].eq(0.5).all()  # type: ignore[attr-defined]
    assert scope["param"].eq(1.0).all()  # type: ignore[attr-defined]


def test_an_alias_made_in_one_arm_is_no_alias_in_the_next() -> None:
    assert codes(SPLIT) == []
    assert run(SPLIT)["again"].equal(run(SPLIT)["tensor"])  # type: ignore[attr-defined]
