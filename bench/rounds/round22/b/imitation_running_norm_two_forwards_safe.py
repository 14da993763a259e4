# label: safe
# why: RunningNorm updates running_mean/running_var in place (under no_grad) on every training forward, including the second forward on the expert batch before the discriminator loss is backpropagated, but the normalisation only uses them through new tensors (x - mean, sqrt(var + eps)), so no saved tensor is overwritten.
# source: https://github.com/HumanCompatibleAI/imitation/blob/e5ef18806c449ca47153b494a02471c5e2ae3a14/src/imitation/util/networks.py
import torch as th
from torch import nn
import torch.nn.functional as F

th.manual_seed(0)


class BaseNorm(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.register_buffer("running_mean", th.empty(num_features))
        self.register_buffer("running_var", th.empty(num_features))
        self.register_buffer("count", th.empty((), dtype=th.int))
        BaseNorm.reset_running_stats(self)

    def reset_running_stats(self) -> None:
        self.running_mean.zero_()
        self.running_var.fill_(1)
        self.count.zero_()

    def forward(self, x: th.Tensor) -> th.Tensor:
        """Updates statistics if in training mode. Returns normalized `x`."""
        if self.training:
            with th.no_grad():
                self.update_stats(x)
        return (x - self.running_mean) / th.sqrt(self.running_var + self.eps)


class RunningNorm(BaseNorm):
    def update_stats(self, batch: th.Tensor) -> None:
        batch_mean = th.mean(batch, dim=0)
        batch_var = th.var(batch, dim=0, unbiased=False)
        batch_count = batch.shape[0]

        delta = batch_mean - self.running_mean
        tot_count = self.count + batch_count
        self.running_mean += delta * batch_count / tot_count

        self.running_var *= self.count
        self.running_var += batch_var * batch_count
        self.running_var += th.square(delta) * self.count * batch_count / tot_count
        self.running_var /= tot_count

        self.count += batch_count


class BasicRewardNet(nn.Module):
    def __init__(self, obs_dim, act_dim, hid_sizes=(32, 32)):
        super().__init__()
        self.normalize_input_layer = RunningNorm(obs_dim + act_dim)
        layers, in_dim = [], obs_dim + act_dim
        for h in hid_sizes:
            layers += [nn.Linear(in_dim, h), nn.ReLU()]
            in_dim = h
        layers.append(nn.Linear(in_dim, 1))
        self.mlp = nn.Sequential(*layers)

    def forward(self, state, action):
        inputs = th.cat([state, action], dim=1)
        inputs = self.normalize_input_layer(inputs)
        return self.mlp(inputs).squeeze(1)


def main():
    reward_net = BasicRewardNet(obs_dim=4, act_dim=2)
    optimizer = th.optim.Adam(reward_net.parameters(), lr=1e-3)
    gen_obs, gen_acts = th.randn(16, 4) * 3 + 1, th.randn(16, 2)
    expert_obs, expert_acts = th.randn(16, 4), th.randn(16, 2) * 0.5
    # GAIL discriminator step: logits for generator and expert samples, then one backward
    disc_logits_gen = reward_net(gen_obs, gen_acts)
    disc_logits_expert = reward_net(expert_obs, expert_acts)
    logits = th.cat([disc_logits_gen, disc_logits_expert])
    labels = th.cat([th.ones(16), th.zeros(16)])
    loss = F.binary_cross_entropy_with_logits(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    grads = [p.grad.clone() for p in reward_net.parameters()]
    optimizer.step()
    return loss.detach(), grads, reward_net.normalize_input_layer.running_mean.clone()


loss, grads, running_mean = main()
