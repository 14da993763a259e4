# label: safe
# why: the fixed hook runs the power iteration under no_grad, refreshes the u buffer in place, and divides the weight out of place (weight / sigma), leaving weight_org untouched
# source: https://github.com/pytorch/pytorch/pull/7298
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parameter import Parameter

torch.manual_seed(0)


def l2normalize(v, eps=1e-12):
    denom = v.norm(p=2) + eps
    return v / denom


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
        with torch.no_grad():
            for _ in range(self.n_power_iterations):
                v = l2normalize(torch.matmul(weight_mat.t(), u), self.eps)
                u = l2normalize(torch.matmul(weight_mat, v), self.eps)
        sigma = torch.dot(u, torch.matmul(weight_mat, v))
        weight = weight / sigma
        return weight, u

    def __call__(self, module, inputs):
        weight, u = self.compute_weight(module)
        setattr(module, self.name, weight)
        with torch.no_grad():
            module._buffers[self.name + '_u'].copy_(u)

    @staticmethod
    def apply(module, name, n_power_iterations, eps):
        fn = SpectralNorm(name, n_power_iterations, eps)
        weight = module._parameters[name]
        height = weight.size(0)
        u = l2normalize(weight.new_empty(height).normal_(0, 1), fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_org", weight)
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module, name='weight', n_power_iterations=1, eps=1e-12):
    SpectralNorm.apply(module, name, n_power_iterations, eps)
    return module


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            spectral_norm(nn.Linear(6, 16)), nn.LeakyReLU(0.1),
            spectral_norm(nn.Linear(16, 1)))

    def forward(self, x):
        return self.main(x)


netD = Discriminator()
real = torch.randn(8, 6)
fake = torch.randn(8, 6) * 2
d_real = netD(real)
d_fake = netD(fake)
errD = F.softplus(-d_real).mean() + F.softplus(d_fake).mean()
errD.backward()
