# label: safe
# why: SpectralConv scatters the contracted modes into a fresh `out_fft` buffer and, on the real-data path, zeroes the imaginary part of the DC and Nyquist bins of the ifftn output in place; neither ifftn nor the index-put needs those values for backward, so plain autograd differentiates this correctly (the later upstream rewrite only works around an MKL planner failure).
# source: https://github.com/neuraloperator/neuraloperator/commit/af0ca6e3645654694cd7198f1d49c67ecf4afe97
from typing import List, Optional, Tuple

import torch
import torch.nn as nn

torch.manual_seed(0)


def _contract_dense(x, weight, separable=False):
    # x: (batch, in_channels, m1, m2), weight: (in_channels, out_channels, m1, m2)
    return torch.einsum("bixy,ioxy->boxy", x, weight)


class SpectralConv(nn.Module):
    def __init__(self, in_channels, out_channels, n_modes, complex_data=False, fft_norm="forward",
                 enforce_hermitian_symmetry=True, bias=True):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.complex_data = complex_data
        self.fft_norm = fft_norm
        self.enforce_hermitian_symmetry = enforce_hermitian_symmetry
        self.order = len(n_modes)
        self.separable = False
        self.n_modes = n_modes
        self.max_n_modes = self.n_modes
        init_std = (2 / (in_channels + out_channels)) ** 0.5
        self.weight = nn.Parameter(
            init_std * torch.randn(in_channels, out_channels, *self.n_modes, dtype=torch.cfloat)
        )
        self.bias = nn.Parameter(init_std * torch.randn(out_channels, *((1,) * self.order))) if bias else None
        self._contract = _contract_dense

    @property
    def n_modes(self):
        return self._n_modes

    @n_modes.setter
    def n_modes(self, n_modes):
        n_modes = list(n_modes)
        # the real FFT is skew-symmetric, so the last mode has a redundacy if our data is real in space
        if not self.complex_data:
            n_modes[-1] = n_modes[-1] // 2 + 1
        self._n_modes = n_modes

    def forward(self, x: torch.Tensor, output_shape: Optional[Tuple[int]] = None):
        batchsize, channels, *mode_sizes = x.shape

        fft_size = list(mode_sizes)
        if not self.complex_data:
            fft_size[-1] = fft_size[-1] // 2 + 1  # Redundant last coefficient in real spatial data
        fft_dims = list(range(-self.order, 0))

        x = torch.fft.rfftn(x, norm=self.fft_norm, dim=fft_dims)
        dims_to_fft_shift = fft_dims[:-1]
        if self.order > 1:
            x = torch.fft.fftshift(x, dim=dims_to_fft_shift)

        out_dtype = torch.cfloat
        out_fft = torch.zeros([batchsize, self.out_channels, *fft_size], device=x.device, dtype=out_dtype)

        # if current modes are less than max, start indexing modes closer to the center of the weight tensor
        starts = [(max_modes - min(size, n_mode))
                  for (size, n_mode, max_modes) in zip(fft_size, self.n_modes, self.max_n_modes)]
        slices_w = [slice(None), slice(None)]  # in_channels, out_channels
        slices_w += [slice(start // 2, -start // 2) if start else slice(start, None) for start in starts[:-1]]
        slices_w += [slice(None, -starts[-1]) if starts[-1] else slice(None)]
        slices_w = tuple(slices_w)
        weight = self.weight[slices_w]

        weight_start_idx = 2
        slices_x = [slice(None), slice(None)]  # Batch_size, channels
        for all_modes, kept_modes in zip(fft_size, list(weight.shape[weight_start_idx:])):
            center = all_modes // 2
            negative_freqs = kept_modes // 2
            positive_freqs = kept_modes // 2 + kept_modes % 2
            slices_x += [slice(center - negative_freqs, center + positive_freqs)]
        if weight.shape[-1] < fft_size[-1]:
            slices_x[-1] = slice(None, weight.shape[-1])
        else:
            slices_x[-1] = slice(None)
        slices_x = tuple(slices_x)

        x_kept = x[slices_x]
        out_fft[slices_x] = self._contract(x_kept, weight, separable=self.separable)

        if output_shape is not None:
            mode_sizes = output_shape

        if self.order > 1:
            out_fft = torch.fft.ifftshift(out_fft, dim=fft_dims[:-1])

        if self.enforce_hermitian_symmetry:
            out_fft = torch.fft.ifftn(out_fft, s=mode_sizes[:-1], dim=fft_dims[:-1], norm=self.fft_norm)

            # Enforce Hermitian symmetry conditions for irfft
            # 0th frequency must be real
            out_fft[..., 0].imag.zero_()

            # Nyquist frequency must be real if the spatial size is even
            if mode_sizes[-1] % 2 == 0:
                out_fft[..., -1].imag.zero_()

            # Now that the Hermitian symmetry conditions are enforced, we can use irfft on the last dimension.
            x = torch.fft.irfft(out_fft, n=mode_sizes[-1], dim=fft_dims[-1], norm=self.fft_norm)
        else:
            x = torch.fft.irfftn(out_fft, s=mode_sizes, dim=fft_dims, norm=self.fft_norm)

        if self.bias is not None:
            x = x + self.bias
        return x


class FNOBlock(nn.Module):
    def __init__(self, channels, n_modes):
        super().__init__()
        self.conv = SpectralConv(channels, channels, n_modes)
        self.skip = nn.Conv2d(channels, channels, 1)

    def forward(self, x):
        return torch.nn.functional.gelu(self.conv(x) + self.skip(x))


def main():
    lifting = nn.Conv2d(1, 4, 1)
    block = FNOBlock(4, n_modes=(6, 6))
    projection = nn.Conv2d(4, 1, 1)
    grid = torch.linspace(0, 1, 16)
    a = torch.sin(2 * torch.pi * grid)[None, None, :, None] * torch.cos(2 * torch.pi * grid)[None, None, None, :]
    a = a + 0.1 * torch.randn(3, 1, 16, 16)
    u = torch.roll(a, shifts=2, dims=-1)
    pred = projection(block(lifting(a)))
    loss = ((pred - u) ** 2).mean()
    loss.backward()
    return loss.detach(), block.conv.weight.grad.clone(), lifting.weight.grad.clone()


loss, spectral_weight_grad, lifting_grad = main()
