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
    # the caller's saved tensor: the backward fails, which IPL001 reports on the helper's write
    assert (7, "IPL001") in codes(source)


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


# Graphs that outlive one step (issue 18, round 6): which parameters an optimizer updates,
# what a helper or a method call does to the graph, and which values a forward saved.

TWIN_CRITIC = """
import torch
from torch import nn


class Twin(nn.Module):
    def __init__(self):
        super().__init__()
        self.q1 = nn.Linear(4, 1)
        self.q2 = nn.Linear(4, 1)

    def forward(self, x):
        return self.q1(x), self.q2(x)


class Agent:
    def __init__(self):
        self.policy = nn.Linear(4, 4)
        self.critic = Twin()
        self.critic_target = Twin()
        self.first_optim = torch.optim.Adam(self.critic.q1.parameters())
        self.second_optim = torch.optim.Adam(self.critic.q2.parameters())

    def critic_losses(self, x, y):
        a, b = self.critic(x)
        return (a - y).pow(2).mean(), (b - y).pow(2).mean()

    def policy_loss(self, x):
        a, b = self.critic(self.policy(x))
        return -torch.min(a, b).mean()

    def learn(self, x, y):
        first, second = self.critic_losses(x, y)
{order}
"""

STEPS_BEFORE = """\
        actor = self.policy_loss(x)
        first.backward()
        self.first_optim.step()
        second.backward()
        self.second_optim.step()
        actor.backward()"""

STEPS_AFTER = """\
        first.backward()
        self.first_optim.step()
        second.backward()
        self.second_optim.step()
        actor = self.policy_loss(x)
        actor.backward()"""


def test_an_optimizer_on_self_steps_the_submodule_it_was_built_over() -> None:
    # ``self.first_optim`` is known from __init__ (no name hint matches ``critic.q1``), the
    # methods' results carry the saves of the critic's forward, and stepping q1 leaves the
    # graph of ``second`` (through q2 only) intact
    assert codes(TWIN_CRITIC.format(order=STEPS_BEFORE)) == [(36, "IPL001"), (38, "IPL001")]
    assert codes(TWIN_CRITIC.format(order=STEPS_AFTER)) == []


HELPER_STEP = """
import torch
from torch import nn


def update(optim, loss, retain_graph=False):
    optim.zero_grad()
    loss.backward(retain_graph=retain_graph)
    optim.step()


critic = nn.Linear(4, 1)
policy = nn.Linear(4, 4)
critic_optim = torch.optim.Adam(critic.parameters())
policy_optim = torch.optim.Adam(policy.parameters())


def learn(x, y):
{body}
"""


def test_a_helper_that_backwards_and_steps_acts_at_each_call() -> None:
    stale = """\
    critic_loss = (critic(x) - y).pow(2).mean()
    policy_loss = -critic(policy(x)).mean()
    update(critic_optim, critic_loss)
    update(policy_optim, policy_loss)"""
    fresh = """\
    critic_loss = (critic(x) - y).pow(2).mean()
    update(critic_optim, critic_loss)
    policy_loss = -critic(policy(x)).mean()
    update(policy_optim, policy_loss)"""
    shared = """\
    h = critic(x)
    update(critic_optim, h.mean(), retain_graph=True)
    update(policy_optim, policy(x).mean() + h.pow(2).mean())"""
    assert codes(HELPER_STEP.format(body=stale)) == [(9, "IPL001")]
    assert codes(HELPER_STEP.format(body=fresh)) == []
    assert codes(HELPER_STEP.format(body=shared)) == [(9, "IPL001")]
    # the graph of ``h`` was freed by the first backward: no second backward through it
    freed = shared.replace(", retain_graph=True", "").replace(" + h.pow(2).mean()", "")
    assert codes(HELPER_STEP.format(body=freed)) == []


GAN_INSTANCE = """
import torch
from torch import nn


class GAN(nn.Module):
    def __init__(self):
        super().__init__()
        self.generator = nn.Linear(4, 4)
        self.discriminator = nn.Linear(4, 1)
        self.gen_optimizer = torch.optim.Adam(self.generator.parameters())
        self.dis_optimizer = torch.optim.Adam(self.discriminator.parameters())


model = GAN()


def train(batches):
    for real, z in batches:
        fake = model.generator(z)
        d_loss = model.discriminator(real).mean() - model.discriminator({fake}).mean()
        g_loss = -model.discriminator(fake).mean()
        d_loss.backward()
{steps}
"""


def test_submodules_and_optimizers_of_the_one_instance_are_reached_through_it() -> None:
    stale = "        model.dis_optimizer.step()\n        g_loss.backward()\n"
    fixed = "        g_loss.backward()\n        model.dis_optimizer.step()\n"
    steps = stale + "        model.gen_optimizer.step()"
    assert codes(GAN_INSTANCE.format(fake="fake.detach()", steps=steps)) == [(24, "IPL001")]
    steps = fixed + "        model.gen_optimizer.step()"
    assert codes(GAN_INSTANCE.format(fake="fake.detach()", steps=steps)) == []


QUEUE = """
import torch
from torch import nn


class Queue(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 8)
        self.register_buffer("queue", torch.randn(8, 16))

    @torch.no_grad()
    def enqueue(self, keys):
        self.queue[:, :2] = keys.T

    def forward(self, x, keys):
        q = self.encoder(x)
        logits = torch.einsum("nc,ck->nk", [q, {queue}])
        self.enqueue(keys)
        return logits
"""


def test_a_method_that_writes_a_buffer_breaks_the_callers_save_of_it() -> None:
    # einsum saves the tensors of its operand list; the method's write moves their version
    assert codes(QUEUE.format(queue="self.queue")) == [(14, "IPL001")]
    assert codes(QUEUE.format(queue="self.queue.clone().detach()")) == []


OWNED = """
import torch
from torch import nn


class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.scale = nn.Parameter(torch.ones(1))

    def forward(self, x):
        return self.proj(x) * self.scale


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def forward(self, x):
        y = {call}(x)
        self.inner.scale.data.clamp_(0, 10)
        return y
"""


def test_a_write_to_an_owners_parameter_is_not_a_write_to_its_submodules() -> None:
    assert codes(OWNED.format(call="self.inner.proj")) == []
    assert codes(OWNED.format(call="self.inner")) == [(23, "IPL007")]


PENALTY = """
import torch


def penalty(critic, fake):
    mixed = {mixed}
    return critic(mixed).pow(2).mean()


def train(gen, critic, z, steps):
    opt_g = torch.optim.Adam(gen.parameters())
    fake = gen(z)
    penalty(critic, fake).backward()
    for _ in range(steps):
{step}
        opt_g.step()
"""


def test_a_helper_result_depends_only_on_the_arguments_it_is_computed_from() -> None:
    reuse = "        critic(fake).mean().backward(retain_graph=True)"
    fresh = "        fake = gen(z)\n        critic(fake).mean().backward()"
    detached = "fake.detach().requires_grad_(True)"
    # the penalty's backward does not free ``fake``'s graph: the loop reuses it after a step
    assert codes(PENALTY.format(mixed=detached, step=reuse)) == [(16, "IPL001")]
    assert codes(PENALTY.format(mixed=detached, step=fresh)) == []
    # through ``fake`` itself the penalty's backward frees that graph: no save is left to break
    assert codes(PENALTY.format(mixed="fake", step=reuse)) == []


RENORM = """
import torch
import torch.nn.functional as F
from torch import nn

table = nn.Embedding(5, 4{norm})
w = torch.randn(5, 4, requires_grad=True)
idx = torch.tensor([1, 2])
{first}
{second}
(a.sum() + b.sum()).backward()
"""


def test_an_embedding_lookup_with_max_norm_renormalises_its_weight_in_place() -> None:
    module_use, module_lookup = "a = table.weight @ w.t()", "b = table(idx) @ w.t()"
    func_use, func_lookup = "a = w @ w.t()", "b = F.embedding(idx, w, max_norm=1.0)"
    source = RENORM.format(norm=", max_norm=1.0", first=module_use, second=module_lookup)
    assert codes(source) == [(10, "IPL001")]
    source = RENORM.format(norm=", max_norm=1.0", first=module_lookup, second=module_use)
    assert codes(source) == []
    assert codes(RENORM.format(norm="", first=module_use, second=module_lookup)) == []
    assert codes(RENORM.format(norm="", first=func_use, second=func_lookup)) == [(10, "IPL001")]
    assert codes(RENORM.format(norm="", first=func_lookup, second=func_use)) == []
    plain = func_lookup.replace(", max_norm=1.0", "")
    assert codes(RENORM.format(norm="", first=func_use, second=plain)) == []
    # ``max_norm=table.max_norm`` is None unless configured: not assumed to be set
    configured = func_lookup.replace("1.0", "table.max_norm")
    assert codes(RENORM.format(norm="", first=func_use, second=configured)) == []


TRAIN_STEP = """
import torch
from torch import nn

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)


def train_step(x, y):
    pred = model(y)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward(retain_graph=True)
    opt.step()
    return {returned}
"""


def test_a_step_after_the_functions_own_backward_is_not_a_callers_hazard() -> None:
    # the loss is returned for logging: its graph was differentiated before the step
    assert codes(TRAIN_STEP.format(returned="loss")) == []
    # ``pred`` was never differentiated here: a caller's backward meets the stepped weights
    assert codes(TRAIN_STEP.format(returned="pred")) == [(14, "IPL001")]


TRAINER = """
import torch
from torch import nn


class Trainer:
    def __init__(self):
        self.G = nn.Linear(4, 4)
        self.D = nn.Linear(4, 1)
        self.opt_d = torch.optim.Adam(self.D.parameters())
        self.opt_g = torch.optim.Adam(self.G.parameters())

    def update_d(self, loss):
        self.opt_d.zero_grad()
        loss.backward()
        self.opt_d.step()

    def update_g(self, loss):
        self.opt_g.zero_grad()
        loss.backward()
        self.opt_g.step()

    def train_step(self, real, z):
        fake = self.G(z)
        d_loss = self.D(real).mean() - self.D(fake.detach()).mean()
{order}
"""


def test_a_method_that_steps_an_optimizer_of_self_acts_at_each_call() -> None:
    stale = "        g_loss = -self.D(fake).mean()\n        self.update_d(d_loss)\n"
    fresh = "        self.update_d(d_loss)\n        g_loss = -self.D(fake).mean()\n"
    assert codes(TRAINER.format(order=stale + "        self.update_g(g_loss)")) == [(16, "IPL001")]
    assert codes(TRAINER.format(order=fresh + "        self.update_g(g_loss)")) == []
    # the step in update_g comes after the last backward: nothing for the caller to meet
    assert (
        codes(TRAINER.format(order=fresh + "        self.update_g(g_loss)\n        return fake"))
        == []
    )
