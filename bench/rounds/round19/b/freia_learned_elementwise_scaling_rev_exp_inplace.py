# label: safe
# why: in the reverse pass exp_() runs on the fresh output of s.neg() (negation keeps nothing for backward), so the in-place exp equals s.neg().exp() for values and gradients
# source: https://github.com/vislearn/FrEIA/blob/4c76c72641a5bd7e629ab3d8928ad7f60503bba7/FrEIA/modules/inv_auto_layers.py
import torch
import torch.nn as nn

torch.manual_seed(0)


class LearnedElementwiseScaling(nn.Module):
    def __init__(self, dims_in, init_scale=0.0):
        super().__init__()
        self.s = nn.Parameter(init_scale * torch.randn(*dims_in[0]))

    def forward(self, x, rev=False):
        if not rev:
            return [x[0] * self.s.exp()]
        return [x[0] * self.s.neg().exp_()]

    def jacobian(self, x, rev=False):
        return (-1) ** rev * self.s.sum().expand(x[0].shape[0])


class AffineCoupling(nn.Module):
    def __init__(self, dims_in):
        super().__init__()
        d = dims_in[0][0]
        self.split = d // 2
        self.net = nn.Sequential(nn.Linear(self.split, 8), nn.Tanh(), nn.Linear(8, 2 * (d - self.split)))

    def forward(self, x, rev=False):
        x1, x2 = x[0][:, : self.split], x[0][:, self.split:]
        s, t = self.net(x1).chunk(2, dim=1)
        s = torch.tanh(s)
        self.last_jac = s.sum(1) * (-1) ** rev
        y2 = x2 * s.exp() + t if not rev else (x2 - t) * torch.exp(-s)
        return [torch.cat([x1, y2], dim=1)]

    def jacobian(self, x, rev=False):
        return self.last_jac


class ReversibleSequence(nn.Module):
    def __init__(self, modules):
        super().__init__()
        self.module_list = nn.ModuleList(modules)

    def forward(self, x, rev=False):
        out = [x]
        log_jac = 0
        mods = self.module_list if not rev else reversed(self.module_list)
        for m in mods:
            new_out = m(out, rev=rev)
            log_jac = log_jac + m.jacobian(out, rev=rev)
            out = new_out
        return out[0], log_jac


flow = ReversibleSequence([
    LearnedElementwiseScaling([(4,)], init_scale=0.3),
    AffineCoupling([(4,)]),
    LearnedElementwiseScaling([(4,)], init_scale=0.3),
])
x = torch.randn(5, 4)
z, log_jac = flow(x)
nll = 0.5 * z.pow(2).sum(1) - log_jac
x_rec, log_jac_rev = flow(torch.randn(5, 4), rev=True)
loss = nll.mean() + 0.1 * x_rec.pow(2).mean() - 0.1 * log_jac_rev.mean()
loss.backward()
