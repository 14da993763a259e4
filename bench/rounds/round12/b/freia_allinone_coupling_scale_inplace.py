# label: hazard raises
# why: _affine scales the subnet's coupling coefficients with a *= 0.1 in place, but the subnet ends in Tanh, whose backward needs that very output
# source: https://github.com/vislearn/FrEIA/pull/164 (commit 08cc21082381a42c1e84a5af510a9100ecdea00e)
import torch
import torch.nn as nn

torch.manual_seed(0)


class AllInOneBlock(nn.Module):
    """Reduced from FrEIA.modules.AllInOneBlock (affine coupling + soft permutation + global scaling)."""

    def __init__(self, channels, subnet_constructor, affine_clamping=2., gin_block=False,
                 global_affine_init=1.):
        super().__init__()
        self.in_channels = channels
        self.splits = [channels - channels // 2, channels // 2]
        self.sum_dims = (1,)
        self.clamp = affine_clamping
        self.GIN = gin_block
        global_scale = 2. - torch.log(torch.tensor(10. / global_affine_init - 1.))
        self.global_scale = nn.Parameter(torch.ones(1, channels) * global_scale)
        self.global_offset = nn.Parameter(torch.zeros(1, channels))
        w = torch.linalg.qr(torch.randn(channels, channels))[0]
        self.w_perm = nn.Parameter(w, requires_grad=False)
        self.subnet = subnet_constructor(self.splits[0], 2 * self.splits[1])

    def global_scale_activation(self, a):
        return 10 * torch.sigmoid(a - 2.)

    def _permute(self, x, rev=False):
        scale = self.global_scale_activation(self.global_scale)
        perm_log_jac = torch.sum(torch.log(scale))
        return (x * scale + self.global_offset) @ self.w_perm.t(), perm_log_jac

    def _affine(self, x, a, rev=False):
        # the entire coupling coefficient tensor is scaled down by a
        # factor of ten for stability and easier initialization.
        a *= 0.1  # <-- IPL001: a is the Tanh output of the subnet, saved by TanhBackward
        ch = x.shape[1]

        sub_jac = self.clamp * torch.tanh(a[:, :ch] / self.clamp)
        if self.GIN:
            sub_jac -= torch.mean(sub_jac, dim=self.sum_dims, keepdim=True)

        if not rev:
            return (x * torch.exp(sub_jac) + a[:, ch:],
                    torch.sum(sub_jac, dim=self.sum_dims))
        else:
            return ((x - a[:, ch:]) * torch.exp(-sub_jac),
                    -torch.sum(sub_jac, dim=self.sum_dims))

    def forward(self, x, c=[], rev=False, jac=True):
        x1, x2 = torch.split(x[0], self.splits, dim=1)
        a1 = self.subnet(x1)
        x2, j2 = self._affine(x2, a1)
        log_jac_det = j2
        x_out = torch.cat((x1, x2), 1)
        x_out, global_scaling_jac = self._permute(x_out, rev=False)
        n_pixels = x_out[0, :1].numel()
        log_jac_det += (-1) ** rev * n_pixels * global_scaling_jac
        return (x_out,), log_jac_det


def subnet_fc(c_in, c_out):
    return nn.Sequential(nn.Linear(c_in, 32), nn.ReLU(), nn.Linear(32, c_out), nn.Tanh())


flow = nn.ModuleList([AllInOneBlock(4, subnet_fc) for _ in range(3)])
x = torch.randn(16, 4)
z, log_jac = (x,), torch.zeros(16)
for block in flow:
    z, j = block(z)
    log_jac = log_jac + j
nll = (0.5 * z[0].pow(2).sum(1) - log_jac).mean()
nll.backward()
