# label: hazard raises no-twin
# why: fit() writes the least-squares solution into self.linear.weight with copy_, an in-place write to a leaf parameter that requires grad, outside torch.no_grad().
# source: https://github.com/tristandeleu/pytorch-maml-rl/commit/875aac47a7b11feea4f8917b913d5281f28fd7fc
import torch
import torch.nn as nn

torch.manual_seed(0)


class BatchEpisodes:
    def __init__(self, observations, rewards, mask, gamma=0.95):
        self.observations, self.rewards, self.mask = observations, rewards, mask
        returns = torch.zeros_like(rewards)
        running = torch.zeros(rewards.size(1))
        for t in reversed(range(rewards.size(0))):
            running = rewards[t] + gamma * running * mask[t]
            returns[t] = running
        self.returns = returns


class LinearFeatureBaseline(nn.Module):
    def __init__(self, input_size, reg_coeff=1e-5):
        super(LinearFeatureBaseline, self).__init__()
        self.input_size = input_size
        self._reg_coeff = reg_coeff
        self.linear = nn.Linear(self.feature_size, 1, bias=False)
        self.linear.weight.data.zero_()

    @property
    def feature_size(self):
        return 2 * self.input_size + 4

    def _feature(self, episodes):
        ones = episodes.mask.unsqueeze(2)
        observations = episodes.observations * ones
        cum_sum = torch.cumsum(ones, dim=0) * ones
        al = cum_sum / 100.0
        return torch.cat([observations, observations ** 2, al, al ** 2, al ** 3, ones], dim=2)

    def fit(self, episodes):
        featmat = self._feature(episodes).view(-1, self.feature_size)
        returns = episodes.returns.view(-1, 1)
        reg_coeff = self._reg_coeff
        eye = torch.eye(self.feature_size, dtype=torch.float32, device=self.linear.weight.device)
        for _ in range(5):
            try:
                coeffs = torch.linalg.solve(
                    torch.matmul(featmat.t(), featmat) + reg_coeff * eye,
                    torch.matmul(featmat.t(), returns),
                )
                break
            except RuntimeError:
                reg_coeff += 10
        else:
            raise RuntimeError("Unable to solve the normal equations in `LinearFeatureBaseline`.")
        self.linear.weight.copy_(coeffs.t())  # <-- IPL003: in-place copy into a parameter that requires grad

    def forward(self, episodes):
        features = self._feature(episodes)
        return self.linear(features)


T, B, obs_dim = 6, 3, 2
episodes = BatchEpisodes(torch.randn(T, B, obs_dim), torch.randn(T, B), torch.ones(T, B))
baseline = LinearFeatureBaseline(obs_dim)
baseline.fit(episodes)
values = baseline(episodes).squeeze(-1)
advantages = episodes.returns - values
