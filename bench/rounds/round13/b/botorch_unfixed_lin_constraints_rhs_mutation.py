# label: hazard silent
# why: new_rhs aliases the caller's rhs tensor, so "new_rhs -= ..." shifts the stored constraint in place and every later call (e.g. another restart) sees an already-adjusted right-hand side
# source: https://github.com/pytorch/botorch/pull/901 (fix commit e23ad502629846bdc0a75a2e2af7f50982a330eb, issue #898)
from typing import Dict, List, Optional, Tuple

import torch
from torch import Tensor


def _generate_unfixed_lin_constraints(
    constraints: Optional[List[Tuple[Tensor, Tensor, float]]],
    fixed_features: Dict[int, float],
    dimension: int,
    eq: bool,
) -> Optional[List[Tuple[Tensor, Tensor, float]]]:
    if not constraints:
        return constraints
    unfixed_keys = sorted(set(range(dimension)) - set(fixed_features))
    unfixed_keys = torch.tensor(unfixed_keys).to(constraints[0][0])
    replace_index = torch.arange(dimension - len(fixed_features)).to(constraints[0][0])

    new_constraints = []
    for constraint_id, (indices, coefficients, rhs) in enumerate(constraints):
        new_rhs = rhs
        new_indices = []
        new_coefficients = []
        indices_2dim = indices if indices.ndim == 2 else indices.unsqueeze(-1)
        for coefficient, index in zip(coefficients, indices_2dim):
            ffval_or_None = fixed_features.get(index[-1].item())
            if ffval_or_None is None:
                new_indices.append(index)
                new_coefficients.append(coefficient)
            else:
                new_rhs -= coefficient.item() * ffval_or_None  # <-- IPL004, IPL002: mutates the caller's rhs tensor
        if len(new_indices) == 0:
            if (eq and new_rhs != 0) or (not eq and new_rhs > 0):
                raise RuntimeError(f"constraint {constraint_id} not met with fixed_features.")
        else:
            new_indices = torch.stack(new_indices, dim=0)
            new_indices_dim_d = new_indices[:, -1].unsqueeze(-1)
            new_indices_dim_d = replace_index[torch.nonzero(new_indices_dim_d == unfixed_keys, as_tuple=True)[1]]
            new_indices[:, -1] = new_indices_dim_d
            new_indices.squeeze_(-1)
            new_coefficients = torch.stack(new_coefficients)
            new_constraints.append((new_indices, new_coefficients, new_rhs))
    return new_constraints


# x0 + 2 x1 + x2 >= 1.5 with x1 fixed at 0.25
rhs = torch.tensor(1.5)
inequality_constraints = [(torch.tensor([0, 1, 2]), torch.tensor([1.0, 2.0, 1.0]), rhs)]
fixed_features = {1: 0.25}

restart_rhs = []
for restart in range(3):
    new_constraints = _generate_unfixed_lin_constraints(inequality_constraints, fixed_features, dimension=3, eq=False)
    restart_rhs.append(torch.as_tensor(new_constraints[0][2]).clone())
restart_rhs = torch.stack(restart_rhs)
