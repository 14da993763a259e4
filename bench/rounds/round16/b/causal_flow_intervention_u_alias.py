# label: hazard silent
# why: without the clone, u_int aliases the abducted noise u, so writing the intervened coordinates into u_int rewrites the caller's u; the abducted noise no longer maps back to the factual sample
# source: https://github.com/adrianjav/causal-flows (IntervenedTransform._inv_call: "u_int = u.clone()  # Avoid aliasing")
from contextlib import contextmanager
from typing import List

import torch
from torch import LongTensor, Tensor

torch.manual_seed(0)


class TriangularAffineTransform:
    """x_i = u_i + sum_{j<i} W_ij x_j (a causal, lower-triangular SCM)."""

    def __init__(self, W):
        self.W = torch.tril(W, diagonal=-1)

    def __call__(self, x):  # x -> u
        return x - x @ self.W.T

    def inv(self, u):  # u -> x
        eye = torch.eye(self.W.shape[0])
        return torch.linalg.solve_triangular(eye - self.W, u.unsqueeze(-1), upper=False).squeeze(-1)


class IntervenedTransform:
    def __init__(self, transform, index: List[LongTensor], value: List[Tensor]):
        self.transform = transform
        self.index = index
        self.value = value

    def __call__(self, x):
        return self.transform(x)

    def inv(self, u):
        index = torch.cat(self.index, dim=-1)
        value = torch.stack(self.value, dim=-1)
        x = self.transform.inv(u)
        x[..., index] = value.to(device=x.device)
        u_tmp = self.transform(x)
        u_int = u
        u_int[..., index] = u_tmp[..., index]  # <-- IPL004: writes the intervention into the caller's noise tensor u
        return self.transform.inv(u_int)


class CausalNormalizingFlow:
    def __init__(self, transform):
        self.og_transform = transform
        self.transform = transform
        self.indexes: List[LongTensor] = []
        self.values: List[Tensor] = []

    @contextmanager
    def intervene(self, index, value):
        try:
            yield self._start_intervention(index, value)
        finally:
            self._stop_intervention(index)

    def _start_intervention(self, index, value):
        if not torch.is_tensor(index):
            index = torch.tensor(index).long().view(-1)
        if not torch.is_tensor(value):
            value = torch.tensor(value)
        self.indexes.append(index)
        self.values.append(value)
        self.transform = IntervenedTransform(self.og_transform, self.indexes, self.values)
        return self

    def _stop_intervention(self, index):
        self.indexes.pop()
        self.values.pop()
        if len(self.indexes) == 0:
            self.transform = self.og_transform


flow = CausalNormalizingFlow(TriangularAffineTransform(torch.randn(3, 3)))
factual = torch.randn(4, 3)
u = flow.transform(factual)  # abduction, done once
counterfactuals = []
for value in [-1.0, 0.0, 1.0]:
    with flow.intervene(0, value) as nflow:
        counterfactuals.append(nflow.transform.inv(u))
counterfactuals = torch.stack(counterfactuals)
factual_reconstruction = flow.transform.inv(u)  # should give back `factual`
