# label: hazard raises no-twin
# why: GaussianMLP._forward_from_indices un-shuffles the ensemble outputs with `mean[model_indices] = mean` (same for logvar), an index_put_ whose source is the tensor it overwrites: the permuted writes read rows already overwritten (the original bug) and current PyTorch rejects the overlapping write, so TS-inf propagation in the planner raises; no-twin because the source is the very tensor the marked write updates, so a line-local rewrite cannot separate them (the commit's `.clone()` is the safe file).
# source: https://github.com/facebookresearch/mbrl-lib/commit/177b3b7924848955291d040c9db62b2b9f48b50b
from typing import Optional, Tuple, Union

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def gaussian_nll(pred_mean: torch.Tensor, pred_logvar: torch.Tensor, target: torch.Tensor, reduce: bool = True) -> torch.Tensor:
    l2 = F.mse_loss(pred_mean, target, reduction="none")
    inv_var = (-pred_logvar).exp()
    losses = l2 * inv_var + pred_logvar
    if reduce:
        return losses.sum(dim=1).mean()
    return losses


class EnsembleLinearLayer(nn.Module):
    """Efficient linear layer for ensemble models."""

    def __init__(self, num_members: int, in_size: int, out_size: int, bias: bool = True):
        super().__init__()
        self.num_members = num_members
        self.in_size = in_size
        self.out_size = out_size
        # truncated-normal style init (std = 1 / (2 * sqrt(in_size))), bias starts at zero
        stddev = 1 / (2 * (in_size ** 0.5))
        self.weight = nn.Parameter(torch.randn(self.num_members, self.in_size, self.out_size).clamp(-2, 2) * stddev)
        self.bias = nn.Parameter(torch.zeros(self.num_members, 1, self.out_size))

    def forward(self, x):
        return x.matmul(self.weight) + self.bias


class Model(nn.Module):
    def __init__(self, in_size: int, out_size: int, device: Union[str, torch.device]):
        super().__init__()
        self.in_size = in_size
        self.out_size = out_size
        self.device = torch.device(device)
        self.is_ensemble = False

    def __len__(self):
        return self.num_members


class GaussianMLP(Model):
    """Ensemble of MLPs each modeling a Gaussian distribution (PETS, Chua et al. 2018)."""

    def __init__(self, in_size: int, out_size: int, device: Union[str, torch.device], num_layers: int = 4,
                 ensemble_size: int = 1, hid_size: int = 200, use_silu: bool = False):
        super(GaussianMLP, self).__init__(in_size, out_size, device)
        activation_cls = nn.SiLU if use_silu else nn.ReLU
        self.num_members = None
        if ensemble_size > 1:
            self.is_ensemble = True
            self.num_members = ensemble_size

        def create_linear_layer(l_in, l_out):
            if ensemble_size > 1:
                return EnsembleLinearLayer(ensemble_size, l_in, l_out)
            else:
                return nn.Linear(l_in, l_out)

        hidden_layers = [nn.Sequential(create_linear_layer(in_size, hid_size), activation_cls())]
        for i in range(num_layers - 1):
            hidden_layers.append(nn.Sequential(create_linear_layer(hid_size, hid_size), activation_cls()))
        self.hidden_layers = nn.Sequential(*hidden_layers)

        self.mean_and_logvar = create_linear_layer(hid_size, 2 * out_size)
        logvar_shape = (self.num_members, 1, out_size) if self.is_ensemble else (1, out_size)
        self.min_logvar = nn.Parameter(-10 * torch.ones(logvar_shape, requires_grad=True))
        self.max_logvar = nn.Parameter(0.5 * torch.ones(logvar_shape, requires_grad=True))
        self.out_size = out_size

        self.to(self.device)

    def _default_forward(self, x: torch.Tensor, **_kwargs) -> Tuple[torch.Tensor, torch.Tensor]:
        x = self.hidden_layers(x)
        mean_and_logvar = self.mean_and_logvar(x)
        mean = mean_and_logvar[..., : self.out_size]
        logvar = mean_and_logvar[..., self.out_size:]
        logvar = self.max_logvar - F.softplus(self.max_logvar - logvar)
        logvar = self.min_logvar + F.softplus(logvar - self.min_logvar)
        return mean, logvar

    def _forward_from_indices(self, x: torch.Tensor, model_indices: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        _, batch_size, _ = x.shape
        shuffled_x = x[:, model_indices, ...].view(len(self), batch_size // len(self), -1)
        # these are shuffled
        mean, logvar = self._default_forward(shuffled_x)
        mean = mean.view(batch_size, -1)
        logvar = logvar.view(batch_size, -1)
        # invert the shuffle
        mean[model_indices] = mean  # <-- IPL002
        logvar[model_indices] = logvar  # <-- IPL002
        return mean, logvar

    def _forward_ensemble(self, x: torch.Tensor, propagation: Optional[str] = None,
                          propagation_indices: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor]:
        if propagation is None:
            return self._default_forward(x)
        assert x.ndim == 2
        assert x.shape[0] % len(self) == 0
        x = x.unsqueeze(0)
        if propagation == "random_model":
            model_indices = torch.randperm(x.shape[1], device=self.device)
            return self._forward_from_indices(x, model_indices)
        if propagation == "fixed_model":
            return self._forward_from_indices(x, propagation_indices)
        if propagation == "expectation":
            mean, logvar = self._default_forward(x.unsqueeze(0))
            return mean.mean(dim=0), logvar.mean(dim=0)
        raise ValueError(f"Invalid propagation method {propagation}.")

    def forward(self, x: torch.Tensor, propagation: Optional[str] = None,
                propagation_indices: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor]:
        if self.is_ensemble:
            return self._forward_ensemble(x, propagation=propagation, propagation_indices=propagation_indices)
        return self._default_forward(x)

    def loss(self, model_in: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        pred_mean, pred_logvar = self.forward(model_in)
        if self.is_ensemble:
            assert model_in.ndim == 3 and target.ndim == 3
            nll: torch.Tensor = 0.0
            for i in range(self.num_members):
                member_loss = gaussian_nll(pred_mean[i], pred_logvar[i], target[i])
                member_loss += 0.01 * self.max_logvar[i].sum() - 0.01 * self.min_logvar[i].sum()
                nll += member_loss
            return nll / self.num_members
        return gaussian_nll(pred_mean, pred_logvar, target)


def sample_next_obs(model, obs, action, propagation_indices):
    """ModelEnv.step-style one-step prediction with TS-inf ("fixed_model") propagation."""
    model_in = torch.cat([obs, action], dim=-1)
    means, logvars = model(model_in, propagation="fixed_model", propagation_indices=propagation_indices)
    variances = logvars.exp()
    next_obs = obs + torch.normal(means, torch.sqrt(variances))
    return next_obs, means


ensemble_size, obs_dim, act_dim, population = 4, 3, 1, 8
model = GaussianMLP(obs_dim + act_dim, obs_dim, device="cpu", num_layers=2,
                    ensemble_size=ensemble_size, hid_size=16)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

# one training step on ensemble batches
model_in = torch.randn(ensemble_size, 10, obs_dim + act_dim)
target = torch.randn(ensemble_size, 10, obs_dim)
optimizer.zero_grad()
train_loss = model.loss(model_in, target)
train_loss.backward()
optimizer.step()

# trajectory sampling for planning: particle j always uses model propagation_indices[j]
propagation_indices = torch.randperm(population)
obs = torch.randn(population, obs_dim)
with torch.no_grad():
    for t in range(3):
        action = torch.randn(population, act_dim)
        obs, predicted_means = sample_next_obs(model, obs, action, propagation_indices)
final_obs = obs
