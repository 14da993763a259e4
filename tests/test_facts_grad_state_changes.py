"""Facts that change what a tensor or module needs after it was made: ``detach_()`` and
``requires_grad_(False)`` on a tensor, ``module.requires_grad_(False)`` on a module, a helper
that makes its parameter a leaf before differentiating against it, an alias that keeps the
branch arms its tensors came from, a helper that copies its argument itself on one arm, a
module method called under no_grad, and casts between kinds of dtype. Reduced from untuned
runs 13, 16, 18 and 19, round 23 and the chain. Every program is run with torch.
"""

from __future__ import annotations

from programs import behave, codes, run

PROBE = """
import torch


def energy(pos):
    return (pos.sin() * 2).sum()


def probe(positions):
    def grad_of(pos):
        with torch.enable_grad():
            pos.requires_grad_(True)
            g = torch.autograd.grad(energy(pos), pos)[0]
            {release}
        return g.detach()

    p = positions.clone().detach()
    out = []
    for j in range(3):
        p[..., j] += 1e-3
        out.append(grad_of(p))
    return out


probe(torch.randn(2, 3))
"""


def test_a_probe_released_from_the_graph_in_place_is_no_leaf_that_requires_grad() -> None:
    for release in ("pos.detach_()", "pos.requires_grad_(False)"):
        safe = PROBE.format(release=release)
        hazard = PROBE.format(release="pass")
        assert codes(safe) == [], release
        assert codes(hazard) == [(20, "IPL003")]
        behave(hazard, safe, match="leaf Variable that requires grad")


FROZEN = """
import torch
import torch.nn as nn


def build(reference):
    embedding = nn.Embedding(4, 3)
    {freeze}
    embedding.weight[0] = reference.weight[1].detach().clone()
    return embedding


build(nn.Embedding(4, 3))
"""


def test_a_module_frozen_by_requires_grad_false_has_no_leaf_parameters() -> None:
    safe = FROZEN.format(freeze="embedding.requires_grad_(False)")
    hazard = FROZEN.format(freeze="embedding.requires_grad_(True)")
    assert codes(safe) == []
    assert codes(hazard) == [(9, "IPL003")]
    behave(hazard, safe, match="leaf Variable that requires grad")


BOUND_METHOD = """
import torch


class Projector:
    def _channel_view(self, x):
        return x.view(x.size(0), -1)

    def project(self, p):
        for view_func in [self._channel_view]:
            return p.data / view_func(p.data).norm(dim=1, keepdim=True).add_(1e-8)


w = torch.nn.Parameter(torch.randn(3, 4))
Projector().project(w)
"""


def test_a_bound_method_of_a_plain_class_is_no_model() -> None:
    assert codes(BOUND_METHOD) == []
    run(BOUND_METHOD)


ARMS = """
import torch
import torch.nn as nn


def index_put(tensor, indices, value):
    tensor[indices] = value
    return tensor


class Patches(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.BatchNorm2d(1, affine=False)
        self.unfold = nn.Unfold(kernel_size=(2, 2), stride=(2, 2))

    def forward(self, source, mask, prepatched=False):
        if prepatched:
            patches = source.clone()
        else:
            source = source.unsqueeze(1)
            patches = self.unfold(self.norm(source) * 0.5).transpose(-1, -2)
        features = patches
        features = index_put(features, mask, 0.0)
        return features.sum()


x = torch.randn(2, 4, 4, requires_grad=True)
Patches()(x, torch.tensor([True, False])).backward()
"""


def test_an_alias_keeps_the_arms_its_tensors_came_from() -> None:
    assert codes(ARMS) == []
    run(ARMS)


SAMPLER = """
import torch


def apply_temperature(logits, temp):
    return logits.div_(temp.unsqueeze(1))


class Rejection:
    def forward(self, target_logits, temp, needs_raw):
        {copy}
        target_logits = apply_temperature(target_logits, temp)
        return target_logits.softmax(-1)


def execute(logits, temp, needs_raw):
    probs = Rejection().forward(logits, temp, needs_raw)
    raw = logits.log_softmax(-1)
    return probs, raw


execute(torch.randn(2, 5), torch.tensor([0.5, 2.0]), True)
"""


def test_a_helper_that_copies_the_argument_itself_on_one_arm_decides_for_its_callers() -> None:
    copied = SAMPLER.format(copy="if needs_raw:\n            target_logits = target_logits.clone()")
    assert codes(copied) == []
    assert codes(SAMPLER.format(copy="pass")) == [(6, "IPL004")]
    run(copied)


NO_GRAD_SAMPLE = """
import torch
import torch.nn as nn


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear1 = nn.Linear(4, 4)
        self.linear2 = nn.Linear(4, 2)

    def sample(self, state):
        return torch.tanh(self.linear2(torch.relu(self.linear1(state))))


class Agent:
    def __init__(self):
        self.policy = Policy()
        self.critic = nn.Linear(2, 1)
        self.optim = torch.optim.SGD(self.policy.parameters(), lr=0.1)

    def update(self, state):
        {mode}
            target = self.policy.sample(state)
        q_loss = (self.critic(torch.randn(3, 2)) - target.sum(1, keepdim=True)).pow(2).mean()
        pi_loss = self.policy.sample(state).sum()
        pi_loss.backward()
        self.optim.step()
        q_loss.backward()


Agent().update(torch.randn(3, 4))
"""


def test_a_module_method_called_under_no_grad_saves_nothing_for_later_backwards() -> None:
    safe = NO_GRAD_SAMPLE.format(mode="with torch.no_grad():")
    hazard = NO_GRAD_SAMPLE.format(mode="if True:")
    assert codes(safe) == []
    assert codes(hazard) == [(28, "IPL001")]
    behave(hazard, safe)


TRAINING_COPY = """
import torch
import torch.nn as nn


class DeepFilter(nn.Module):
    def forward(self, spec, coefs):
        spec_f = (spec[..., :2] * coefs).sum(-1, keepdim=True)
        {copy}
        spec[..., :1] = spec_f
        return spec
"""


def test_a_forward_that_copies_its_input_when_training_writes_it_only_in_eval() -> None:
    copied = TRAINING_COPY.format(copy="if self.training:\n            spec = spec.clone()")
    assert codes(copied) == []
    # ``spec`` is kept for ``coefs``' gradient only if ``coefs`` needs grad, which for two
    # raw inputs of a forward is an assumption (test_facts_assumed_operands): the write is
    # reported as the argument mutation it is for certain
    assert codes(TRAINING_COPY.format(copy="pass")) == [(10, "IPL004")]
    run(copied + "\nDeepFilter().eval()(torch.randn(3, 4), torch.randn(3, 2))\n")


CAST = """
import torch


def labels(x):
    p = x / 0.5
    s = p.sin()
    idx = p.{cast}()
    idx[idx > 1] = 1
    return s.sum(), idx


loss, idx = labels(torch.randn(4, requires_grad=True))
loss.backward()
"""


def test_a_cast_to_another_kind_of_dtype_is_a_copy() -> None:
    # ``(x / 0.5).long()`` is always a copy: writing it leaves what ``sin`` saved alone
    copied = CAST.format(cast="long")
    assert codes(copied) == []
    # ``.float()`` of a floating tensor may be the tensor itself: the write may reach it
    assert [code for _, code in codes(CAST.format(cast="float"))] == ["IPL001"]
    run(copied)


CODEBOOK = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Codebook(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Parameter(torch.randn(4, 3))

    def forward(self, x):
        dist = x @ self.embed.t()
        {pick}
        self.embed.data.mul_(0.9)
        return q
"""


def test_an_index_picked_by_argmax_carries_no_graph_of_what_it_was_picked_from() -> None:
    picked = CODEBOOK.format(pick="q = F.embedding(dist.argmax(-1), self.embed)")
    blended = CODEBOOK.format(pick="q = dist.softmax(-1) @ self.embed")
    assert codes(picked) == []
    assert [code for _, code in codes(blended)] == ["IPL007"]
    run(picked + "\nCodebook()(torch.randn(2, 3)).sum().backward()\n")


NUMBA = """
import numpy as np
import scipy.sparse as sp
{decorator}


{line}
def dropedge_cosine(A, iA, jA, features, threshold):
    removed_cnt = 0
    for row in range(len(iA) - 1):
        for i in range(iA[row], iA[row + 1]):
            a, b = features[row], features[jA[i]]
            C = (a * b).sum() / (np.sqrt(np.square(a).sum()) * np.sqrt(np.square(b).sum()) + 1e-8)
            if C < threshold:
                A[i] = 0
                removed_cnt += 1
    return removed_cnt


class Jaccard:
    def drop_dissimilar_edges(self, features, adj, threshold=0.1):
        adj_triu = sp.triu(adj, format="csr")
        removed_cnt = dropedge_cosine(
            adj_triu.data, adj_triu.indptr, adj_triu.indices, features, threshold=threshold
        )
        modified_adj = adj_triu + adj_triu.transpose()
        return modified_adj, removed_cnt
"""


def test_a_numba_compiled_function_writes_arrays_not_tensors() -> None:
    compiled = NUMBA.format(decorator="from numba import njit", line="@njit")
    assert codes(compiled) == []


LAST_STEP = """
import torch


def search(steps, n):
    const = torch.ones(n)
    upper_bound = torch.full((n,), 1e10)
    for step in range(steps):
        {test}
            const = upper_bound
        loss = (const * 2).sum()
        const[0] *= 10
    return const, loss
"""


def test_an_alias_made_on_the_last_iteration_only_meets_no_later_read() -> None:
    for test in ("if step == steps - 1:", "if n > 1 and step == steps - 1:"):
        source = LAST_STEP.format(test=test)
        assert codes(source) == [], test
        run(source + "\nsearch(3, 2)\n")
    # any step may alias the bound: a later step's write reaches the alias's reads
    assert codes(LAST_STEP.format(test="if step % 2 == 1:")) != []


SPLIT = """
import torch


def qdq(weight, scale):
    weight.div_(scale).round_()
    return weight


def quant_tensor(weight, group_size, split):
    weight1 = weight[:, :split]{reshape}
    weight1 = qdq(weight1, 0.5)
    weight2 = weight[:, {read}]
    return weight1, weight2.sum()
"""


def test_a_helper_write_to_some_columns_leaves_the_other_columns_to_read() -> None:
    for reshape in ("", ".reshape(-1, 2)"):
        # the untouched columns are read: no stale read (the helper's own write may still be
        # reported for want of a caller of ``quant_tensor``)
        disjoint = SPLIT.format(reshape=reshape, read="split:")
        assert not any("reads" in message for message in _messages(disjoint)), reshape
        overlapping = SPLIT.format(reshape=reshape, read=":split + 1")
        assert any("reads" in message for message in _messages(overlapping)), reshape
    run(SPLIT.format(reshape="", read="split:") + "\nquant_tensor(torch.randn(2, 4), 2, 2)\n")


def _messages(source: str) -> list[str]:
    from inplace_lint.checks import all_rules
    from inplace_lint.engine import lint_source

    every = frozenset(rule.code for rule in all_rules())
    return [f.message for f in lint_source(source, "t.py", every)]
