# label: hazard raises
# why: the simulator's sensor step normalizes image_plane with /= by its own max() and then *= max_val; max() saved image_plane for backward, so learning the PSF through the simulator fails.
# source: https://github.com/ebezzam/waveprop/pull/11
import numpy as np
import torch

torch.manual_seed(0)


class RealFFTConvolve2D:
    def __init__(self, psf):
        self.psf = psf
        self.conv_dim = np.array(psf.shape[-2:])
        self.pad_shape = 2 * self.conv_dim - 1
        self.start = (self.pad_shape - self.conv_dim) // 2
        self.end = self.start + self.conv_dim

    def __call__(self, x):
        H = torch.fft.rfft2(self.psf, s=tuple(self.pad_shape))
        X = torch.fft.rfft2(x, s=tuple(self.pad_shape))
        conv = torch.fft.irfft2(H * X, s=tuple(self.pad_shape))
        return conv[..., self.start[0]:self.end[0], self.start[1]:self.end[1]]


def add_shot_noise(image, snr_db, generator):
    sig_var = image.var()
    noise_var = sig_var / (10 ** (snr_db / 10))
    noise = torch.randn(image.shape, generator=generator) * noise_var.sqrt()
    return image + noise


class FarFieldSimulator(object):
    def __init__(self, psf, snr_db=None, max_val=255, quantize=True):
        self.axes = (-2, -1)
        self.output_dtype = torch.float32
        self.conv = RealFFTConvolve2D(psf)
        self.snr_db = snr_db
        self.max_val = max_val
        self.quantize = quantize
        self.generator = torch.Generator().manual_seed(1)

    def propagate(self, obj, return_object_plane=False):
        object_plane = obj
        # 2) Convolve with PSF
        image_plane = self.conv(object_plane)
        # 4) (Optionally) Add shot noise
        if self.snr_db is not None:
            image_plane = add_shot_noise(image_plane, snr_db=self.snr_db, generator=self.generator)
        # 5) (Optionaly) Quantize as on sensor
        if self.quantize:
            image_plane /= image_plane.max()  # <-- IPL001: max() saved image_plane for its backward
            image_plane *= self.max_val  # <-- IPL001: keeps rewriting the tensor max() saved
            image_plane = image_plane.to(self.output_dtype)
        if return_object_plane:
            return image_plane, object_plane
        return image_plane


# learn a mask PSF end-to-end through the simulator
psf_logits = torch.randn(1, 6, 6, requires_grad=True)
psf = torch.sigmoid(psf_logits)
simulator = FarFieldSimulator(psf, snr_db=40)
obj = torch.rand(2, 1, 6, 6)
measurement = simulator.propagate(obj)
target = torch.rand(2, 1, 6, 6) * 255
loss = ((measurement - target) / 255).pow(2).mean()
loss.backward()
