# label: hazard raises
# why: CachedCGLazyTensor detaches the caller's right-hand sides in place with detach_(); the variational strategy passes a view of its variational_mean parameter, which cannot be detached in place.
# source: https://github.com/cornellius-gp/gpytorch/commit/ead5e85fd324c8ccfc6f765cf9ee8954cda4cf20
import torch
import torch.nn as nn

torch.manual_seed(0)


class CachedCGLazyTensor:
    @classmethod
    def precompute_terms(cls, base_lazy_tensor, eager_rhs, logdet_terms=False):
        with torch.no_grad():
            solves = torch.cholesky_solve(eager_rhs, torch.linalg.cholesky(base_lazy_tensor))
            empty = torch.tensor([], dtype=solves.dtype)
            return solves.detach(), empty, empty, empty, empty

    def __init__(self, base_lazy_tensor, eager_rhss=[], solves=[], probe_vectors=torch.tensor([]),
                 probe_vector_norms=torch.tensor([]), probe_vector_solves=torch.tensor([]),
                 probe_vector_tmats=torch.tensor([])):
        self.base_lazy_tensor = base_lazy_tensor
        self.eager_rhss = [eager_rhs.detach_().requires_grad_(False) for eager_rhs in eager_rhss]  # <-- IPL004: detaches the caller's tensors in place
        self.solves = [solve.detach_().requires_grad_(False) for solve in solves]  # <-- IPL004: detaches the caller's tensors in place
        self.probe_vectors = probe_vectors.detach_().requires_grad_(False)
        self.probe_vector_norms = probe_vector_norms.detach_().requires_grad_(False)
        self.probe_vector_solves = probe_vector_solves.detach_().requires_grad_(False)
        self.probe_vector_tmats = probe_vector_tmats.detach_().requires_grad_(False)

    def inv_matmul(self, rhs):
        for eager_rhs, solve in zip(self.eager_rhss, self.solves):
            if torch.equal(rhs.detach(), eager_rhs):
                return solve
        return torch.cholesky_solve(rhs, torch.linalg.cholesky(self.base_lazy_tensor))


class RBFKernel(nn.Module):
    def __init__(self):
        super().__init__()
        self.raw_lengthscale = nn.Parameter(torch.zeros(1))

    def forward(self, x1, x2):
        ls = nn.functional.softplus(self.raw_lengthscale)
        return torch.exp(-0.5 * ((x1.unsqueeze(-2) - x2.unsqueeze(-3)) / ls).pow(2).sum(-1))


class VariationalStrategy(nn.Module):
    def __init__(self, inducing_points):
        super().__init__()
        self.inducing_points = nn.Parameter(inducing_points)
        self.variational_mean = nn.Parameter(torch.randn(inducing_points.size(0)) * 0.1)
        self.covar_module = RBFKernel()

    def forward(self, x):
        induc_induc_covar = self.covar_module(self.inducing_points, self.inducing_points) + 1e-3 * torch.eye(self.inducing_points.size(0))
        induc_data_covar = self.covar_module(self.inducing_points, x)
        inducing_values = self.variational_mean.unsqueeze(-1)
        eager_rhs = inducing_values
        solves, probe_vecs, probe_vec_norms, probe_vec_solves, tmats = CachedCGLazyTensor.precompute_terms(
            induc_induc_covar, eager_rhs.detach(), logdet_terms=False)
        cached = CachedCGLazyTensor(induc_induc_covar, eager_rhss=[eager_rhs], solves=[solves],
                                    probe_vectors=probe_vecs, probe_vector_norms=probe_vec_norms,
                                    probe_vector_solves=probe_vec_solves, probe_vector_tmats=tmats)
        interp_term = torch.cholesky_solve(induc_data_covar, torch.linalg.cholesky(induc_induc_covar))
        predictive_mean = (interp_term.transpose(-1, -2) @ inducing_values).squeeze(-1)
        return predictive_mean, cached


strategy = VariationalStrategy(torch.randn(4, 2))
x = torch.randn(6, 2)
y = torch.randn(6)
predictive_mean, cached = strategy(x)
loss = (predictive_mean - y).pow(2).mean()
loss.backward()
