# label: hazard raises
# why: with residual='normal' the flow output y = tanh(pre_activation) is updated with y += x, but tanh saved its output for backward
# source: https://github.com/pyro-ppl/pyro/commit/2b076266cdbac5250bca2e9c609a64dc261ea654
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

eps = 1e-8


def log_matrix_product(A, B):
    return torch.logsumexp(A.unsqueeze(-1) + B.unsqueeze(-3), dim=-2)


class MaskedBlockLinear(nn.Module):
    def __init__(self, in_features, out_features, dim, bias=True):
        super().__init__()
        self.in_features, self.out_features, self.dim = in_features, out_features, dim
        weight = torch.zeros(out_features, in_features)
        for i in range(dim):
            weight[i * out_features // dim:(i + 1) * out_features // dim,
                   0:(i + 1) * in_features // dim] = torch.nn.init.xavier_uniform_(
                torch.empty(out_features // dim, (i + 1) * in_features // dim))
        self._weight = nn.Parameter(weight)
        self._diag_weight = nn.Parameter(torch.nn.init.uniform_(torch.empty(out_features, 1)).log())
        self.bias = nn.Parameter(torch.nn.init.uniform_(torch.empty(out_features), -1 / math.sqrt(out_features),
                                                        1 / math.sqrt(out_features))) if bias else 0
        mask_d = torch.eye(dim).unsqueeze(-1).repeat(1, out_features // dim, in_features // dim).view(out_features, in_features)
        self.register_buffer('mask_d', mask_d)
        mask_o = torch.tril(torch.ones(dim, dim), diagonal=-1).unsqueeze(-1)
        mask_o = mask_o.repeat(1, out_features // dim, in_features // dim).view(out_features, in_features)
        self.register_buffer('mask_o', mask_o)

    def get_weights(self):
        w = torch.exp(self._weight) * self.mask_d + self._weight * self.mask_o
        w_squared_norm = (w ** 2).sum(-1, keepdim=True)
        w = self._diag_weight.exp() * w / (w_squared_norm.sqrt() + eps)
        wpl = self._diag_weight + self._weight - 0.5 * torch.log(w_squared_norm + eps)
        return w, wpl[self.mask_d.bool()].view(self.dim, self.out_features // self.dim, self.in_features // self.dim)

    def forward(self, x):
        w, wpl = self.get_weights()
        return (torch.matmul(w, x) + self.bias.unsqueeze(-1)).squeeze(-1), wpl


class BlockNAFFlow(nn.Module):
    def __init__(self, input_dim, hidden_factors=(4, 4), residual=None):
        super().__init__()
        self.residual = residual
        self.input_dim = input_dim
        self.layers = nn.ModuleList([MaskedBlockLinear(input_dim, input_dim * hidden_factors[0], input_dim)])
        for idx in range(1, len(hidden_factors)):
            self.layers.append(MaskedBlockLinear(input_dim * hidden_factors[idx - 1], input_dim * hidden_factors[idx], input_dim))
        self.layers.append(MaskedBlockLinear(input_dim * hidden_factors[-1], input_dim, input_dim))
        self._cached_logDetJ = None

    def f(self, x):
        return torch.tanh(x)

    def log_df_dx(self, x):
        return -2. * (x - math.log(2.) + F.softplus(-2. * x))

    def _call(self, x):
        y = x
        for idx in range(len(self.layers)):
            pre_activation, dy_dx = self.layers[idx](y.unsqueeze(-1))
            J_act = self.log_df_dx(pre_activation).view(*(list(x.size()) + [-1, 1]))
            if idx == 0:
                logDetJ = dy_dx + J_act
            else:
                logDetJ = log_matrix_product(dy_dx, logDetJ) + J_act
            y = self.f(pre_activation)

        self._cached_logDetJ = logDetJ.squeeze(-1).squeeze(-1)

        if self.residual == 'normal':
            y += x  # <-- IPL001: tanh saved y for its backward
            self._cached_logDetJ = F.softplus(self._cached_logDetJ)
        return y

    def log_abs_det_jacobian(self, x, y):
        return self._cached_logDetJ.sum(-1)


naf = BlockNAFFlow(input_dim=3, residual='normal')
base_dist = torch.distributions.Normal(torch.zeros(3), torch.ones(3))
x = base_dist.sample((5,))
y = naf._call(x)
log_q = base_dist.log_prob(x).sum(-1) - naf.log_abs_det_jacobian(x, y)
target_log_p = -0.5 * (y ** 2).sum(-1)
loss = (log_q - target_log_p).mean()
loss.backward()
