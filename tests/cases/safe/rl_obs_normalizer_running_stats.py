# label: safe
# why: the running-mean/var buffers are updated in place under torch.no_grad(), before the normalized observation is computed from them
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class RunningObsNorm(nn.Module):
    def __init__(self, dim, momentum=0.1, eps=1e-5, clip=5.0):
        super().__init__()
        self.momentum, self.eps, self.clip = momentum, eps, clip
        self.register_buffer("running_mean", torch.zeros(dim))
        self.register_buffer("running_var", torch.ones(dim))
        self.register_buffer("count", torch.tensor(0, dtype=torch.long))

    def forward(self, obs):
        if self.training:
            with torch.no_grad():
                batch_mean = obs.mean(0)
                batch_var = obs.var(0, unbiased=False)
                self.running_mean.mul_(1 - self.momentum).add_(batch_mean, alpha=self.momentum)
                self.running_var.mul_(1 - self.momentum).add_(batch_var, alpha=self.momentum)
                self.count += 1
        normed = (obs - self.running_mean) / torch.sqrt(self.running_var + self.eps)
        return normed.clamp(-self.clip, self.clip)


obs_norm = RunningObsNorm(4)
policy = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 2))
opt = torch.optim.Adam(policy.parameters(), lr=3e-4)

for it in range(3):
    obs = torch.randn(16, 4) * 2.0 + 1.0
    actions = torch.randint(0, 2, (16,))
    advantages = torch.randn(16)
    logp = F.log_softmax(policy(obs_norm(obs)), dim=-1)
    loss = -(logp.gather(1, actions[:, None]).squeeze(1) * advantages).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

running_mean = obs_norm.running_mean.clone()
running_var = obs_norm.running_var.clone()
policy_weight = policy[0].weight.detach().clone()
