# label: hazard silent
# why: _fix_feature fills a detached view of X's column in place, which silently overwrites the optimizer's candidate tensor X itself instead of producing a new fixed column
# source: https://github.com/pytorch/botorch/commit/a1d27f597e1b5ae890b293f166dea08bce2338d3
from typing import Dict, Optional

import torch
from torch import Tensor

torch.manual_seed(0)


def _fix_feature(Z: Tensor, value: Optional[float]) -> Tensor:
    Z_detached = Z.detach().requires_grad_(False)
    if value is None:
        return Z_detached
    else:
        return Z_detached.fill_(value)  # <-- IPL007: fills a .detach() alias of X in place


def fix_features(X: Tensor, fixed_features: Optional[Dict[int, Optional[float]]] = None) -> Tensor:
    if fixed_features is None:
        return X
    else:
        return torch.cat(
            [
                X[..., i].unsqueeze(-1)
                if i not in fixed_features
                else _fix_feature(X[..., i].unsqueeze(-1), fixed_features[i])
                for i in range(X.shape[-1])
            ],
            dim=-1,
        )


def acquisition_function(X):
    # toy analytic acquisition: negative distance to an optimum at (0.3, 0.7, 0.5)
    return -((X - torch.tensor([0.3, 0.7, 0.5])) ** 2).sum(-1)


initial_candidates = torch.rand(4, 1, 3)
fixed_features = {1: 0.9}

X = initial_candidates.clone().requires_grad_(True)
optimizer = torch.optim.Adam([X], lr=0.05)
for _ in range(3):
    optimizer.zero_grad()
    X_fix = fix_features(X, fixed_features)
    loss = -acquisition_function(X_fix).sum()
    loss.backward()
    optimizer.step()
candidates = X.detach().clone()
batch_acquisition = acquisition_function(fix_features(candidates, fixed_features))
