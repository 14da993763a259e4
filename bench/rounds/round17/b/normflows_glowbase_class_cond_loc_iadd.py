# label: hazard raises
# why: loc and log_scale are bound to the base distribution's nn.Parameters themselves, so adding the class-conditional shift with += is an in-place write to leaf tensors that require grad.
# source: https://github.com/VincentStimper/normalizing-flows/commit/61822d00778f24c0428f47b951a1f7cf61203d81
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class BaseDistribution(nn.Module):
    def forward(self, num_samples=1):
        raise NotImplementedError

    def log_prob(self, z):
        raise NotImplementedError


class GlowBase(BaseDistribution):
    def __init__(self, shape, num_classes=None):
        super().__init__()
        if isinstance(shape, int):
            shape = (shape,)
        self.shape = shape
        self.n_dim = len(shape)
        self.num_pix = np.prod(shape[1:])
        self.d = np.prod(shape)
        self.sum_dim = list(range(1, self.n_dim + 1))
        self.num_classes = num_classes
        self.class_cond = num_classes is not None
        self.loc = nn.Parameter(torch.zeros(1, self.shape[0], *((self.n_dim - 1) * [1])))
        self.log_scale = nn.Parameter(torch.zeros(1, self.shape[0], *((self.n_dim - 1) * [1])))
        if self.class_cond:
            self.loc_cc = nn.Parameter(torch.randn(self.num_classes, self.shape[0]) * 0.1)
            self.log_scale_cc = nn.Parameter(torch.randn(self.num_classes, self.shape[0]) * 0.1)
        self.temperature = None

    def log_prob(self, z, y=None):
        loc = self.loc
        log_scale = self.log_scale
        if self.class_cond:
            if y.dim() == 1:
                y_onehot = torch.zeros((len(y), self.num_classes), dtype=self.loc.dtype, device=self.loc.device)
                y_onehot.scatter_(1, y[:, None], 1)
                y = y_onehot
            loc += y @ self.loc_cc  # <-- IPL003: loc is the leaf parameter self.loc
            log_scale += y @ self.log_scale_cc  # <-- IPL003: log_scale is the leaf parameter self.log_scale
        if self.temperature is not None:
            log_scale += np.log(self.temperature)
        log_p = - 0.5 * self.d * np.log(2 * np.pi) \
                - self.num_pix * torch.sum(log_scale, dim=self.sum_dim) \
                - 0.5 * torch.sum(torch.pow((z - loc) / torch.exp(log_scale), 2), dim=self.sum_dim)
        return log_p


class ActNormFlow(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.s = nn.Parameter(torch.zeros(1, dim))
        self.t = nn.Parameter(torch.zeros(1, dim))

    def inverse(self, x):
        z = (x - self.t) * torch.exp(-self.s)
        return z, -self.s.sum().expand(x.size(0))


class ConditionalNormalizingFlow(nn.Module):
    def __init__(self, q0, flows):
        super().__init__()
        self.q0, self.flows = q0, nn.ModuleList(flows)

    def forward_kld(self, x, y):
        log_q = torch.zeros(len(x))
        z = x
        for flow in reversed(self.flows):
            z, log_det = flow.inverse(z)
            log_q += log_det
        log_q += self.q0.log_prob(z, y)
        return -torch.mean(log_q)


model = ConditionalNormalizingFlow(GlowBase(3, num_classes=2), [ActNormFlow(3), ActNormFlow(3)])
x = torch.randn(5, 3)
y = torch.randint(0, 2, (5,))
loss = model.forward_kld(x, y)
loss.backward()
