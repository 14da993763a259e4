# label: safe
# why: the fix snapshots the running statistics with `old_mean, old_stddev = self.mean.clone(), self.stddev.clone()` before `self.mean.mul_(...).add_(...)`, so the in-place EMA update no longer leaks into the output-preserving rescale of the value head.
# source: https://github.com/marlbenchmark/on-policy/commit/c49b471a604c7f296fb9fb361b511b2abe638b90
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PopArt(torch.nn.Module):

    def __init__(self, input_shape, output_shape, norm_axes=1, beta=0.99999, epsilon=1e-5, device=torch.device("cpu")):

        super(PopArt, self).__init__()

        self.beta = beta
        self.epsilon = epsilon
        self.norm_axes = norm_axes
        # MAPPO runs this on CUDA, where `.to(**self.tpdv)` returns plain tensor copies of the
        # nn.Parameters below; float64 reproduces that copy on CPU.
        self.tpdv = dict(dtype=torch.float64, device=device)

        self.input_shape = input_shape
        self.output_shape = output_shape

        self.weight = nn.Parameter(torch.Tensor(output_shape, input_shape)).to(**self.tpdv)
        self.bias = nn.Parameter(torch.Tensor(output_shape)).to(**self.tpdv)

        self.stddev = nn.Parameter(torch.ones(output_shape), requires_grad=False).to(**self.tpdv)
        self.mean = nn.Parameter(torch.zeros(output_shape), requires_grad=False).to(**self.tpdv)
        self.mean_sq = nn.Parameter(torch.zeros(output_shape), requires_grad=False).to(**self.tpdv)
        self.debiasing_term = nn.Parameter(torch.tensor(0.0), requires_grad=False).to(**self.tpdv)

        self.reset_parameters()

    def reset_parameters(self):
        torch.nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = torch.nn.init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in)
            torch.nn.init.uniform_(self.bias, -bound, bound)
        self.mean.zero_()
        self.mean_sq.zero_()
        self.debiasing_term.zero_()

    def forward(self, input_vector):
        input_vector = input_vector.to(**self.tpdv)
        return F.linear(input_vector, self.weight, self.bias)

    @torch.no_grad()
    def update(self, input_vector):
        input_vector = input_vector.to(**self.tpdv)

        old_mean, old_stddev = self.mean.clone(), self.stddev.clone()

        batch_mean = input_vector.mean(dim=tuple(range(self.norm_axes)))
        batch_sq_mean = (input_vector ** 2).mean(dim=tuple(range(self.norm_axes)))

        self.mean.mul_(self.beta).add_(batch_mean * (1.0 - self.beta))
        self.mean_sq.mul_(self.beta).add_(batch_sq_mean * (1.0 - self.beta))
        self.debiasing_term.mul_(self.beta).add_(1.0 * (1.0 - self.beta))

        self.stddev = (self.mean_sq - self.mean ** 2).sqrt().clamp(min=1e-4)

        self.weight = self.weight * old_stddev / self.stddev
        self.bias = (old_stddev * self.bias + old_mean - self.mean) / self.stddev

    def debiased_mean_var(self):
        debiased_mean = self.mean / self.debiasing_term.clamp(min=self.epsilon)
        debiased_mean_sq = self.mean_sq / self.debiasing_term.clamp(min=self.epsilon)
        debiased_var = (debiased_mean_sq - debiased_mean ** 2).clamp(min=1e-2)
        return debiased_mean, debiased_var

    def normalize(self, input_vector):
        input_vector = input_vector.to(**self.tpdv)
        mean, var = self.debiased_mean_var()
        out = (input_vector - mean[(None,) * self.norm_axes]) / torch.sqrt(var)[(None,) * self.norm_axes]
        return out


class R_Critic(nn.Module):
    def __init__(self, obs_dim, hidden_size=16):
        super().__init__()
        self.base = nn.Sequential(nn.Linear(obs_dim, hidden_size), nn.ReLU(), nn.Linear(hidden_size, hidden_size), nn.ReLU())
        self.v_out = PopArt(hidden_size, 1)

    def forward(self, cent_obs):
        critic_features = self.base(cent_obs)
        values = self.v_out(critic_features)
        return values


def cal_value_loss(value_normalizer, values, return_batch):
    value_normalizer.update(return_batch)
    error = value_normalizer.normalize(return_batch) - values
    return (error ** 2).mean()


def main():
    critic = R_Critic(obs_dim=6)
    optimizer = torch.optim.Adam(critic.base.parameters(), lr=5e-3)
    cent_obs = torch.randn(32, 6)
    return_batch = 10.0 + 3.0 * torch.randn(32, 1)

    losses = []
    for _ in range(3):
        values = critic(cent_obs)
        value_loss = cal_value_loss(critic.v_out, values, return_batch)
        optimizer.zero_grad()
        value_loss.backward()
        optimizer.step()
        losses.append(value_loss.detach())
    return torch.stack(losses), critic.v_out.bias.detach().clone(), critic.v_out.weight.detach().clone()


value_losses, popart_bias, popart_weight = main()
