# label: hazard raises
# why: the actor runs once on stacked [current, target] params, and writing the noisy target action back into slice 1 of that output with an in-place set clobbers the tanh output saved for the actor loss.
# source: https://github.com/pytorch/rl/commit/73a440830a8a12f5973e2ce503eeb8a2bdcc3872
import torch
import torch.nn as nn

torch.manual_seed(0)


class TensorDict(dict):
    def set(self, key, value, inplace=False):
        if inplace and key in self:
            self[key].copy_(value)
        else:
            self[key] = value
        return self


class StackedActor(nn.Module):
    """Actor evaluated with a stack of parameter sets, as functional vmap does."""

    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(act_dim, obs_dim) * 0.3)
        self.bias = nn.Parameter(torch.zeros(act_dim))

    def forward(self, td, params):
        weight, bias = params
        obs = td["observation"]
        action = torch.tanh(torch.einsum("pao,pbo->pba", weight, obs) + bias.unsqueeze(1))
        return TensorDict(observation=obs, action=action)


class TD3Loss:
    def __init__(self, actor, qvalue, target_actor_params, max_action=1.0, policy_noise=0.2, noise_clip=0.5):
        self.actor_network, self.qvalue = actor, qvalue
        self.target_actor_params = target_actor_params
        self.max_action, self.policy_noise, self.noise_clip = max_action, policy_noise, noise_clip

    def forward(self, tensordict):
        actor_params = (
            torch.stack([self.actor_network.weight, self.target_actor_params[0]]),
            torch.stack([self.actor_network.bias, self.target_actor_params[1]]),
        )
        tensordict_actor = TensorDict(observation=torch.stack([tensordict["observation"], tensordict["next_observation"]]))
        actor_output_td = self.actor_network(tensordict_actor, actor_params)
        noise = (torch.randn_like(actor_output_td["action"][1]) * self.policy_noise).clamp(-self.noise_clip, self.noise_clip)
        next_action = (actor_output_td["action"][1] + noise).clamp(-self.max_action, self.max_action)
        target_slice = TensorDict(action=actor_output_td["action"][1])
        target_slice.set("action", next_action, inplace=True)  # <-- IPL001: writes into the stacked tanh output saved for backward
        current_action = actor_output_td["action"][0]
        loss_actor = -self.qvalue(torch.cat([tensordict["observation"], current_action], -1)).mean()
        next_q = self.qvalue(torch.cat([tensordict["next_observation"], target_slice["action"]], -1)).detach()
        target_value = tensordict["reward"] + 0.99 * next_q
        pred = self.qvalue(torch.cat([tensordict["observation"], tensordict["action"]], -1))
        loss_qvalue = (pred - target_value).pow(2).mean()
        return loss_actor, loss_qvalue


obs_dim, act_dim = 3, 2
actor = StackedActor(obs_dim, act_dim)
qvalue = nn.Sequential(nn.Linear(obs_dim + act_dim, 8), nn.ReLU(), nn.Linear(8, 1))
target_params = (actor.weight.detach().clone(), actor.bias.detach().clone())
loss_module = TD3Loss(actor, qvalue, target_params)
batch = TensorDict(observation=torch.randn(4, obs_dim), next_observation=torch.randn(4, obs_dim),
                   action=torch.rand(4, act_dim) * 2 - 1, reward=torch.randn(4, 1))
loss_actor, loss_qvalue = loss_module.forward(batch)
(loss_actor + loss_qvalue).backward()
