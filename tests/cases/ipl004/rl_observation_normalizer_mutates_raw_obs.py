# label: hazard silent
# why: normalize_obs standardizes its obs argument in place, and the caller then feeds the same tensor to the running-statistics update as if it were raw.
import torch
import torch.nn as nn

torch.manual_seed(0)


class RunningMeanStd:
    def __init__(self, dim):
        self.mean = torch.zeros(dim)
        self.var = torch.ones(dim)
        self.count = 1e-4

    def update(self, batch):
        b_mean, b_var, b_count = batch.mean(0), batch.var(0, unbiased=False), batch.size(0)
        delta = b_mean - self.mean
        tot = self.count + b_count
        self.mean = self.mean + delta * b_count / tot
        m2 = self.var * self.count + b_var * b_count + delta.pow(2) * self.count * b_count / tot
        self.var = m2 / tot
        self.count = tot


def normalize_obs(obs, rms, clip=5.0):
    obs.sub_(rms.mean)  # <-- IPL004
    obs.div_((rms.var + 1e-8).sqrt())  # <-- IPL004
    return obs.clamp(-clip, clip)


rms = RunningMeanStd(3)
rms.update(torch.randn(10, 3) * 2 + 1)
policy = nn.Linear(3, 2)

raw_obs = torch.randn(6, 3) * 3 + 2
norm = normalize_obs(raw_obs, rms)
rms.update(raw_obs)
stats = torch.cat([rms.mean, rms.var])

loss = policy(norm).pow(2).mean()
loss.backward()
