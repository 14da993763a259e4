# label: safe
# why: the noise is added in place to the diagonal of a freshly computed kernel matrix through a strided view; nothing saved that matrix, so the marginal likelihood and its gradients are unchanged
# source: https://github.com/pyro-ppl/pyro/issues/3106 (pyro/contrib/gp/models/gpr.py at commit f4b13ec784bd0ce81ef2f5fcdba0b9efd62e7cc2)
import torch
import torch.nn as nn

torch.manual_seed(0)


class RBF(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_variance = nn.Parameter(torch.tensor(0.0))
        self.log_lengthscale = nn.Parameter(torch.tensor(0.0))

    def forward(self, X, Z=None):
        Z = X if Z is None else Z
        scaled_X = X / self.log_lengthscale.exp()
        scaled_Z = Z / self.log_lengthscale.exp()
        r2 = (scaled_X.unsqueeze(1) - scaled_Z.unsqueeze(0)).pow(2).sum(-1)
        return self.log_variance.exp() * torch.exp(-0.5 * r2)


class GPRegression(nn.Module):
    def __init__(self, X, y, kernel, noise=None, jitter=1e-6):
        super().__init__()
        self.X, self.y, self.kernel, self.jitter = X, y, kernel, jitter
        noise = torch.tensor(1.0) if noise is None else noise
        self.log_noise = nn.Parameter(noise.log())

    @property
    def noise(self):
        return self.log_noise.exp()

    def model(self):
        N = self.X.size(0)
        Kff = self.kernel(self.X)
        Kff.view(-1)[:: N + 1] += self.jitter + self.noise  # add noise to diagonal
        Lff = torch.linalg.cholesky(Kff)
        alpha = torch.cholesky_solve(self.y.unsqueeze(-1), Lff)
        return -0.5 * (self.y.unsqueeze(-1) * alpha).sum() - Lff.diagonal().log().sum()


X = torch.linspace(0, 1, 6).unsqueeze(-1)
y = torch.sin(6 * X.squeeze(-1)) + 0.1 * torch.randn(6)
gpr = GPRegression(X, y, RBF(), noise=torch.tensor(0.2))
log_marginal = gpr.model()
(-log_marginal).backward()
