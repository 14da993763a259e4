# label: safe
# why: the Atari PPO network stacks `nn.ReLU(inplace=True)` after each layer_init'ed Conv2d/Linear of the shared DQN trunk; convolutions and linears save their inputs, not their outputs, so the in-place ReLUs overwrite nothing autograd needs and the joint actor/critic PPO loss backpropagates through the shared features.
# source: https://github.com/thu-ml/tianshou/commit/662af528209e7979363f8e8aaec1d38d731a0719
import math
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Type, Union

import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


def layer_init(layer: nn.Module, std: float = math.sqrt(2), bias_const: float = 0.0) -> nn.Module:
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


def scale_obs(module: Type[nn.Module], denom: float = 255.0) -> Type[nn.Module]:

    class scaled_module(module):

        def forward(self, obs, state: Optional[Any] = None, info: Dict[str, Any] = {}):
            return super().forward(obs / denom, state, info)

    return scaled_module


class DQN(nn.Module):
    """Reference: Human-level control through deep reinforcement learning."""

    def __init__(
        self,
        c: int,
        h: int,
        w: int,
        action_shape: Sequence[int],
        device: Union[str, int, torch.device] = "cpu",
        features_only: bool = False,
        output_dim: Optional[int] = None,
        layer_init: Callable[[nn.Module], nn.Module] = lambda x: x,
    ) -> None:
        super().__init__()
        self.device = device
        self.net = nn.Sequential(
            layer_init(nn.Conv2d(c, 32, kernel_size=8, stride=4)),
            nn.ReLU(inplace=True),
            layer_init(nn.Conv2d(32, 64, kernel_size=4, stride=2)),
            nn.ReLU(inplace=True),
            layer_init(nn.Conv2d(64, 64, kernel_size=3, stride=1)),
            nn.ReLU(inplace=True), nn.Flatten()
        )
        with torch.no_grad():
            self.output_dim = int(torch.tensor(self.net(torch.zeros(1, c, h, w)).shape[1:]).prod())
        if not features_only:
            self.net = nn.Sequential(
                self.net, layer_init(nn.Linear(self.output_dim, 512)),
                nn.ReLU(inplace=True),
                layer_init(nn.Linear(512, int(torch.tensor(action_shape).prod())))
            )
            self.output_dim = int(torch.tensor(action_shape).prod())
        elif output_dim is not None:
            self.net = nn.Sequential(
                self.net, layer_init(nn.Linear(self.output_dim, output_dim)),
                nn.ReLU(inplace=True)
            )
            self.output_dim = output_dim

    def forward(self, obs, state: Optional[Any] = None, info: Dict[str, Any] = {}) -> Tuple[torch.Tensor, Any]:
        obs = torch.as_tensor(obs, device=self.device, dtype=torch.float32)
        return self.net(obs), state


class Actor(nn.Module):
    def __init__(self, preprocess_net, action_shape, softmax_output=True):
        super().__init__()
        self.preprocess = preprocess_net
        self.last = layer_init(nn.Linear(preprocess_net.output_dim, action_shape), std=0.01)
        self.softmax_output = softmax_output

    def forward(self, obs, state=None, info={}):
        logits, hidden = self.preprocess(obs, state)
        logits = self.last(logits)
        if self.softmax_output:
            logits = F.softmax(logits, dim=-1)
        return logits, hidden


class Critic(nn.Module):
    def __init__(self, preprocess_net):
        super().__init__()
        self.preprocess = preprocess_net
        self.last = layer_init(nn.Linear(preprocess_net.output_dim, 1), std=1.0)

    def forward(self, obs, **kwargs):
        logits, _ = self.preprocess(obs, state=kwargs.get("state", None))
        return self.last(logits)


def ppo_loss(actor, critic, obs, act, logp_old, adv, returns, eps_clip=0.1, vf_coef=0.25, ent_coef=0.01):
    probs, _ = actor(obs)
    dist = torch.distributions.Categorical(probs=probs)
    ratio = (dist.log_prob(act) - logp_old).exp()
    surr1 = ratio * adv
    surr2 = ratio.clamp(1.0 - eps_clip, 1.0 + eps_clip) * adv
    clip_loss = -torch.min(surr1, surr2).mean()
    value = critic(obs).flatten()
    vf_loss = (returns - value).pow(2).mean()
    ent_loss = dist.entropy().mean()
    return clip_loss + vf_coef * vf_loss - ent_coef * ent_loss


def main():
    c, h, w, n_actions = 4, 36, 36, 6
    net_cls = scale_obs(DQN)
    net = net_cls(c, h, w, (n_actions,), features_only=True, output_dim=64, layer_init=layer_init)
    actor = Actor(net, n_actions, softmax_output=True)
    critic = Critic(net)
    optim = torch.optim.Adam(list(actor.parameters()) + list(critic.last.parameters()), lr=2.5e-4, eps=1e-5)

    obs = torch.randint(0, 256, (8, c, h, w)).float()
    with torch.no_grad():
        probs, _ = actor(obs)
        act = torch.distributions.Categorical(probs=probs).sample()
        logp_old = torch.distributions.Categorical(probs=probs).log_prob(act)
    adv = torch.randn(8)
    returns = torch.randn(8)

    loss = ppo_loss(actor, critic, obs, act, logp_old, adv, returns)
    optim.zero_grad()
    loss.backward()
    grad_first_conv = net.net[0][0].weight.grad.clone()
    optim.step()
    return loss.detach(), grad_first_conv


loss, grad_first_conv = main()
