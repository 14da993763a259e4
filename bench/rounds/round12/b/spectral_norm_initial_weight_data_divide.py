# label: hazard silent
# why: the first SpectralNorm hook normalized with weight.data /= sigma, so the parameter itself is rescaled behind autograd's back on every forward and sigma's dependence on the weight never reaches the gradient
# source: https://github.com/pytorch/pytorch/pull/7298 (fixes the weight.data /= sigma of https://github.com/pytorch/pytorch/pull/6929)
import torch
import torch.nn as nn
from torch.nn.functional import normalize

torch.manual_seed(0)


class SpectralNorm(object):

    def __init__(self, name='weight', n_power_iterations=1, eps=1e-12):
        self.name = name
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def compute_weight(self, module):
        weight = module._parameters[self.name + '_org']
        u = module._buffers[self.name + '_u']
        height = weight.size(0)
        weight_mat = weight.view(height, -1)
        for _ in range(self.n_power_iterations):
            # Spectral norm of weight equals to `u^T W v`, where `u` and `v`
            # are the first left and right singular vectors.
            # This power iteration produces approximations of `u` and `v`.
            v = normalize(torch.matmul(weight_mat.t(), u), dim=0, eps=self.eps)
            u = normalize(torch.matmul(weight_mat, v), dim=0, eps=self.eps)

        sigma = torch.dot(u, torch.matmul(weight_mat, v))
        weight.data /= sigma  # <-- IPL007: rescales the live parameter through .data, so backward never sees the division by sigma
        return weight, u

    def remove(self, module):
        weight = module._parameters[self.name + '_org']
        del module._parameters[self.name]
        del module._buffers[self.name + '_u']
        del module._parameters[self.name + '_org']
        module.register_parameter(self.name, weight)

    def __call__(self, module, inputs):
        weight, u = self.compute_weight(module)
        setattr(module, self.name, weight)
        module._buffers[self.name + '_u'] = u.detach()

    @staticmethod
    def apply(module, name, n_power_iterations, eps):
        fn = SpectralNorm(name, n_power_iterations, eps)
        weight = module._parameters[name]
        height = weight.size(0)
        u = normalize(weight.new_empty(height).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_org", weight)
        module.register_buffer(fn.name + "_u", u)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module, name='weight', n_power_iterations=1, eps=1e-12):
    SpectralNorm.apply(module, name, n_power_iterations, eps)
    return module


critic = nn.Sequential(spectral_norm(nn.Linear(5, 8)), nn.ReLU(), spectral_norm(nn.Linear(8, 1)))
opt = torch.optim.SGD(critic.parameters(), lr=0.05)
x_real, x_fake = torch.randn(6, 5) + 1, torch.randn(6, 5)
for step in range(2):
    loss = critic(x_fake).mean() - critic(x_real).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
final_loss = (critic(x_fake).mean() - critic(x_real).mean()).detach()
