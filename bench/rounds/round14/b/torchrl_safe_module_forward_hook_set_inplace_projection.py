# label: hazard raises
# why: the SafeModule forward hook projects an out-of-bounds action back into the spec with tensordict.set_, an in-place copy into the tanh output that autograd saved for the actor-loss backward
# source: https://github.com/pytorch/rl/commit/2f8c118e3da4fcf484c6c8b85d26d55ffd518615 (PR https://github.com/pytorch/rl/pull/2755)
import torch
import torch.nn as nn

torch.manual_seed(0)


class TensorDict(dict):
    def get(self, key, default=None):
        return super().get(key, default)

    def set(self, key, value):
        self[key] = value
        return self

    def set_(self, key, value):
        self[key].copy_(value)  # <-- IPL001: overwrites the stored action tensor in place
        return self


class BoundedTensorSpec:
    def __init__(self, low, high):
        self.low, self.high = torch.as_tensor(low), torch.as_tensor(high)

    def is_in(self, val):
        return bool(((val >= self.low) & (val <= self.high)).all())

    def project(self, val):
        low, high = self.low.expand_as(val), self.high.expand_as(val)
        return torch.maximum(torch.minimum(val, high), low)


def _forward_hook_safe_action(module, tensordict_in, tensordict_out):
    for _spec, _key in zip(module.spec_values, module.spec_keys):
        item = tensordict_out.get(_key, None)
        if item is None:
            continue
        if not _spec.is_in(item):
            try:
                tensordict_out.set_(_key, _spec.project(tensordict_out.get(_key)))
            except RuntimeError:
                tensordict_out.set(_key, _spec.project(tensordict_out.get(_key)))
    return tensordict_out


class SafeProbabilisticActor(nn.Module):
    def __init__(self, obs_dim, action_dim, spec):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 16), nn.Tanh(), nn.Linear(16, 2 * action_dim))
        self.spec_keys, self.spec_values = ["action"], [spec]
        self.register_forward_hook(_forward_hook_safe_action)

    def forward(self, tensordict):
        loc, log_scale = self.net(tensordict["observation"]).chunk(2, -1)
        scale = log_scale.clamp(-5, 2).exp()
        pre = loc + scale * torch.randn_like(loc)
        action = torch.tanh(pre)
        log_prob = torch.distributions.Normal(loc, scale).log_prob(pre).sum(-1)
        log_prob = log_prob - torch.log1p(-action.pow(2) + 1e-6).sum(-1)
        return TensorDict(observation=tensordict["observation"], loc=loc, scale=scale, action=action,
                          sample_log_prob=log_prob)


actor = SafeProbabilisticActor(obs_dim=4, action_dim=2, spec=BoundedTensorSpec(-0.5, 0.5))
qvalue = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
td = actor(TensorDict(observation=torch.randn(6, 4)))
q = qvalue(torch.cat([td["observation"], td["action"]], -1)).squeeze(-1)
loss_actor = (0.2 * td["sample_log_prob"] - q).mean()
loss_actor.backward()
