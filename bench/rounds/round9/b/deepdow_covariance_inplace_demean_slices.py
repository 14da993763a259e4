# label: hazard raises
# why: CovarianceMatrix demeans each sample with `m -= mean` where m = x[i].T is a view of the batch tensor x, so the next sample's in-place demeaning bumps the shared version counter of the view the previous sample's matmul saved.
# source: https://github.com/jankrepl/deepdow/pull/147
import torch
import torch.nn as nn

torch.manual_seed(0)


class CovarianceMatrix(nn.Module):
    def __init__(self, sqrt=False, shrinkage_strategy="diagonal", shrinkage_coef=0.5):
        super().__init__()
        self.sqrt = sqrt
        self.shrinkage_strategy = shrinkage_strategy
        self.shrinkage_coef = shrinkage_coef

    def forward(self, x):
        n_samples = x.shape[0]
        wrapper = (lambda h: h)
        return torch.stack(
            [
                wrapper(self.compute_covariance(x[i].T, shrinkage_strategy=self.shrinkage_strategy, shrinkage_coef=self.shrinkage_coef))
                for i in range(n_samples)
            ],
            dim=0,
        )

    @staticmethod
    def compute_covariance(m, shrinkage_strategy=None, shrinkage_coef=0.5):
        fact = 1.0 / (m.size(1) - 1)
        m -= torch.mean(m, dim=1, keepdim=True)  # <-- IPL001, IPL004: m is a view of the caller's batch tensor; sibling views were saved by earlier matmuls
        mt = m.t()
        s = fact * m.matmul(mt)  # sample covariance matrix
        s += torch.eye(len(s), dtype=s.dtype, device=s.device) * 0.001  # prevent numerical issues
        if shrinkage_strategy is None:
            return s
        diagonal = torch.diag(torch.diag(s))
        return shrinkage_coef * s + (1 - shrinkage_coef) * diagonal


class BachelierNet(nn.Module):
    def __init__(self, n_input_channels, n_assets, hidden_size=6):
        super().__init__()
        self.transform_layer = nn.Linear(n_input_channels, hidden_size)
        self.covariance_layer = CovarianceMatrix(sqrt=False, shrinkage_strategy="diagonal")
        self.exp_returns = nn.Linear(hidden_size, 1)
        self.gamma = nn.Parameter(torch.ones(1))

    def forward(self, x):
        # x: (n_samples, n_input_channels, lookback, n_assets) -> features (n_samples, hidden, n_assets)
        x = x.mean(dim=2).transpose(1, 2)
        x = torch.tanh(self.transform_layer(x)).transpose(1, 2)
        exp_rets = self.exp_returns(x.transpose(1, 2)).squeeze(-1)
        covmat = self.covariance_layer(x)
        weights = torch.linalg.solve(covmat * self.gamma, exp_rets.unsqueeze(-1)).squeeze(-1)
        return weights / weights.abs().sum(dim=1, keepdim=True)


network = BachelierNet(n_input_channels=2, n_assets=5)
X = torch.randn(3, 2, 10, 5)
y = torch.randn(3, 5)
weights = network(X)
loss = -(weights * y).sum(dim=1).mean()
loss.backward()
