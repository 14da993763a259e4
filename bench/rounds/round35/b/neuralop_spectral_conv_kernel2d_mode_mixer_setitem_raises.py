# label: hazard raises no-twin
# why: SpectralConvKernel2d.forward writes the mixed modes back into the rfft2 output with `x[:, :, :m0, :m1] = self.mode_mixer(x[:, :, :m0, :m1], self.W1)`; the einsum saved that view of x (a view whenever the kept modes span whole rfft rows) for the W1 gradient, so the setitem and the W2 block bump x's version and the FNO loss backward raises; no-twin because the right-hand side reads the same x the marked write updates, so a line-local rewrite cannot separate them (the commit's `.clone()` is the safe file).
# source: https://github.com/neuraloperator/neuraloperator/commit/9b4b2b15233439c4a6588f5e848430233085fec2
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FactorizedSpectralConv(nn.Module):
    """Dense (factorization=None) 2D spectral convolution: keeps the lowest n_modes and mixes channels."""

    def __init__(self, in_channels, out_channels, n_modes, bias=True, n_layers=1, fft_norm='forward'):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.n_modes = n_modes
        self.half_n_modes = [m // 2 for m in n_modes]
        self.fft_norm = fft_norm
        self.factorization = None
        self.separable = False
        self.output_scaling_factor = None
        init_std = (2 / (in_channels + out_channels)) ** 0.5
        weight_shape = (2 * n_layers, in_channels, out_channels, *self.half_n_modes)
        self.weight = nn.Parameter(init_std * torch.randn(weight_shape, dtype=torch.cfloat))
        if bias:
            self.bias = nn.Parameter(init_std * torch.randn((n_layers, out_channels, 1, 1)))
        else:
            self.bias = None

    def _get_weight(self, index):
        return self.weight[index]

    def _contract(self, x, weight, separable=False):
        return torch.einsum("bixy,ioxy->boxy", x, weight)


class SpectralConvKernel2d(FactorizedSpectralConv):
    def __init__(self, in_channels, out_channels, n_modes, bias=True, n_layers=1, fft_norm='forward', fft_type='fft'):
        super().__init__(in_channels, out_channels, n_modes, bias, n_layers, fft_norm)
        hm1, hm2 = self.half_n_modes[0], self.half_n_modes[1]
        if self.factorization is None:
            self.W1 = nn.Parameter(torch.empty(hm1, hm2, hm1, hm2, dtype=torch.cfloat))
            self.W2 = nn.Parameter(torch.empty(hm1, hm2, hm1, hm2, dtype=torch.cfloat))
            self.reset_parameter()
        self.fft_type = fft_type

    def reset_parameter(self):
        # Initial model parameters.
        scaling_factor = 1 / (self.in_channels * self.half_n_modes[0] * self.half_n_modes[1]) ** 0.5
        torch.nn.init.normal_(self.W1, mean=0.0, std=scaling_factor)
        torch.nn.init.normal_(self.W2, mean=0.0, std=scaling_factor)

    def mode_mixer(self, input, weights):
        return torch.einsum("bimn,mnop->biop", input, weights)

    def forward(self, x, indices=0, output_shape=None):
        batchsize, channels, height, width = x.shape

        x = torch.fft.rfft2(x.float(), norm=self.fft_norm)

        # mode mixer
        # uses separate MLP to mix mode along each co-dim/channels
        if self.factorization is None:
            x[:, :, :self.half_n_modes[0], :self.half_n_modes[1]] = self.mode_mixer(x[:, :, :self.half_n_modes[0], :self.half_n_modes[1]], self.W1)  # <-- IPL001
            x[:, :, -self.half_n_modes[0]:, :self.half_n_modes[1]] = self.mode_mixer(x[:, :, -self.half_n_modes[0]:, :self.half_n_modes[1]], self.W2)  # <-- IPL001

        # spectral conv / channel mixer
        out_fft = torch.zeros([batchsize, self.out_channels, height, width // 2 + 1], dtype=x.dtype, device=x.device)

        # upper block (truncate high freq)
        out_fft[:, :, :self.half_n_modes[0], :self.half_n_modes[1]] = self._contract(x[:, :, :self.half_n_modes[0], :self.half_n_modes[1]],
                                                                              self._get_weight(2 * indices), separable=self.separable)
        # Lower block
        out_fft[:, :, -self.half_n_modes[0]:, :self.half_n_modes[1]] = self._contract(x[:, :, -self.half_n_modes[0]:, :self.half_n_modes[1]],
                                                                               self._get_weight(2 * indices + 1), separable=self.separable)

        if output_shape is not None:
            height = output_shape[0]
            width = output_shape[1]

        x = torch.fft.irfft2(out_fft, s=(height, width), dim=(-2, -1), norm=self.fft_norm)

        if self.bias is not None:
            x = x + self.bias[indices, ...]
        return x


class FNO2d(nn.Module):
    def __init__(self, n_modes, hidden_channels, in_channels=3, out_channels=1, n_layers=2):
        super().__init__()
        self.lifting = nn.Conv2d(in_channels, hidden_channels, 1)
        self.convs = SpectralConvKernel2d(hidden_channels, hidden_channels, n_modes, n_layers=n_layers)
        self.fno_skips = nn.ModuleList([nn.Conv2d(hidden_channels, hidden_channels, 1, bias=False) for _ in range(n_layers)])
        self.projection = nn.Sequential(nn.Conv2d(hidden_channels, 16, 1), nn.GELU(), nn.Conv2d(16, out_channels, 1))
        self.n_layers = n_layers

    def forward(self, x):
        x = self.lifting(x)
        for i in range(self.n_layers):
            x_skip = self.fno_skips[i](x)
            x = self.convs(x, indices=i)
            x = x + x_skip
            if i < self.n_layers - 1:
                x = F.gelu(x)
        return self.projection(x)


def get_grid_positional_encoding(a):
    batch, _, h, w = a.shape
    gx = torch.linspace(0, 1, h).view(1, 1, h, 1).expand(batch, 1, h, w)
    gy = torch.linspace(0, 1, w).view(1, 1, 1, w).expand(batch, 1, h, w)
    return torch.cat([a, gx, gy], dim=1)


model = FNO2d(n_modes=(8, 18), hidden_channels=6)  # keep every rfft column (16 // 2 + 1 = 9)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
a = torch.randn(2, 1, 16, 16)          # Darcy coefficient field
u = torch.randn(2, 1, 16, 16)          # solution field
pred = model(get_grid_positional_encoding(a))
loss = F.mse_loss(pred, u)
optimizer.zero_grad()
loss.backward()
optimizer.step()
