# label: hazard raises
# why: with normalize_output_layer=RunningNorm the layer normalizes the MLP's reward output, which requires grad, and update_stats (not yet under no_grad) multiplies th.square(delta) by the count buffer, so MulBackward saves count, which self.count += batch_count then bumps in place before the reward loss is backpropagated.
# source: https://github.com/HumanCompatibleAI/imitation/commit/c85278fa752853d5aedb38d97ac08d0580071671 ("no gradient computations for running stats"; normalize_output_layer added in 6f293c4e)
import torch as th
from torch import nn

th.manual_seed(0)


class RunningNorm(nn.Module):
    running_mean: th.Tensor
    running_var: th.Tensor
    count: th.Tensor

    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.register_buffer("running_mean", th.empty(num_features))
        self.register_buffer("running_var", th.empty(num_features))
        self.register_buffer("count", th.empty((), dtype=th.int))
        self.reset_running_stats()

    def reset_running_stats(self) -> None:
        self.running_mean.zero_()
        self.running_var.fill_(1)
        self.count.zero_()

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

        self.count += batch_count  # <-- IPL001

    def forward(self, x: th.Tensor) -> th.Tensor:
        if self.training:
            self.update_stats(x)

        return (x - self.running_mean) / th.sqrt(self.running_var + self.eps)


def build_mlp(in_size, hid_sizes, out_size=1, activation=nn.ReLU, normalize_input_layer=None, normalize_output_layer=None):
    layers = {}
    if normalize_input_layer:
        layers["normalize_input"] = normalize_input_layer(in_size)
    prev_size = in_size
    for i, size in enumerate(hid_sizes):
        layers[f"dense{i}"] = nn.Linear(prev_size, size)
        prev_size = size
        layers[f"act{i}"] = activation()
    layers["dense_final"] = nn.Linear(prev_size, out_size)
    if normalize_output_layer:
        layers["normalize_output"] = normalize_output_layer(out_size)
    return nn.Sequential(*layers.values())


def main():
    obs_dim, act_dim = 4, 2
    mlp = build_mlp(obs_dim + act_dim, [32, 32], normalize_input_layer=RunningNorm, normalize_output_layer=RunningNorm)
    optim = th.optim.Adam(mlp.parameters(), lr=1e-3)
    obs = th.randn(16, obs_dim)
    acts = th.randn(16, act_dim)
    preferences = th.rand(8)
    rews = mlp(th.cat([obs, acts], dim=1)).squeeze(-1)
    returns = rews.view(8, 2)
    probs = th.sigmoid(returns[:, 0] - returns[:, 1])
    loss = th.nn.functional.binary_cross_entropy(probs, preferences)
    optim.zero_grad()
    loss.backward()
    optim.step()
    return loss


loss = main()
