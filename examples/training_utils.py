"""Training utilities that write into tensors: EMA weights, init, running stats, ``.data``.

Everything that updates parameters or buffers here does so under ``torch.no_grad()`` or before
any graph exists, which is what makes it safe.

The one hazard is ``BoundedActor``: it scales its tanh output through ``.data`` inside
``forward``. ``.data`` skips autograd's version counter, so no error is raised, but tanh
computes its gradient from that very (now scaled) output: the gradients are silently wrong.

Run ``python examples/training_utils.py``.
"""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import nn


def init_weights(module: nn.Module) -> None:
    """DCGAN-style init through ``.data``. Safe: no graph has been built yet."""
    if isinstance(module, nn.Linear):
        module.weight.data.normal_(0.0, 0.02)
        if module.bias is not None:
            module.bias.data.zero_()


class ModelEMA:
    """Exponential moving average of a model's weights, for evaluation."""

    def __init__(self, model: nn.Module, decay: float = 0.99) -> None:
        self.decay = decay
        self.shadow = copy.deepcopy(model).eval()
        for param in self.shadow.parameters():
            param.requires_grad_(False)

    @torch.no_grad()
    def update(self, model: nn.Module) -> None:
        for ema_p, p in zip(self.shadow.parameters(), model.parameters(), strict=True):
            ema_p.mul_(self.decay).add_(p, alpha=1.0 - self.decay)  # safe: no_grad, no graph


class RunningNorm(nn.Module):
    """Normalises features with running statistics kept in buffers."""

    def __init__(self, dim: int, momentum: float = 0.1) -> None:
        super().__init__()
        self.momentum = momentum
        self.register_buffer("running_mean", torch.zeros(dim))
        self.register_buffer("running_var", torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training:
            with torch.no_grad():
                self.running_mean.lerp_(x.mean(dim=0), self.momentum)  # safe: buffer, no_grad
                self.running_var.lerp_(x.var(dim=0), self.momentum)
        return (x - self.running_mean) / (self.running_var + 1e-5).sqrt()


class BoundedActor(nn.Module):
    """Policy head for continuous control: actions squashed into [-max_action, max_action]."""

    def __init__(self, dim: int, actions: int, max_action: float, via_data: bool = True) -> None:
        super().__init__()
        self.fc = nn.Linear(dim, actions)
        self.max_action = max_action
        self.via_data = via_data

    def forward(self, state: torch.Tensor) -> torch.Tensor:
        action = torch.tanh(self.fc(state))
        if self.via_data:
            action.data.mul_(self.max_action)  # <-- IPL007
        else:
            action = action * self.max_action  # safe: a new tensor in the graph
        return action


def train(model: nn.Module, steps: int = 30) -> float:
    """A plain loop: forward, backward, clip, step, EMA. Returns the last loss."""
    torch.manual_seed(1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    ema = ModelEMA(model)
    loss = torch.tensor(0.0)
    for _ in range(steps):
        state = torch.randn(32, 8)
        target = 1.5 * torch.tanh(state[:, :2])
        loss = F.mse_loss(model(state), target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)  # safe: works on .grad
        opt.step()
        ema.update(model)
    return loss.item()


def main() -> None:
    torch.manual_seed(0)
    safe = nn.Sequential(RunningNorm(8), BoundedActor(8, 2, max_action=2.0, via_data=False))
    bypass = nn.Sequential(RunningNorm(8), BoundedActor(8, 2, max_action=2.0))
    safe.apply(init_weights)
    bypass.load_state_dict(safe.state_dict())

    state = torch.tensor([[-2.0, -0.5, 0.0, 0.5, 2.0]])
    print("state                    :", state[0])
    for name, via_data in (("safe", False), (".data bypass", True)):
        actor = BoundedActor(5, 5, max_action=2.0, via_data=via_data)
        with torch.no_grad():  # safe: an identity layer, set up before any forward
            actor.fc.weight.copy_(torch.eye(5))
            actor.fc.bias.zero_()
        x = state.clone().requires_grad_()
        actor(x).sum().backward()
        print(f"{name:<13} d action/d s :", x.grad[0])
    print("  (the true slope 2 * (1 - tanh^2) is never negative; the bypass used 1 - (2 tanh)^2)")

    print(f"safe model, final loss {train(safe):.4f}")
    print(f"bypass model trains without any error, final loss {train(bypass):.4f}")


if __name__ == "__main__":
    main()
