# label: hazard raises
# why: the phase update normalizes `angles` with `angles.div_(...)` although complex_norm just saved `angles` for backward, so backprop through GriffinLim fails.
# source: https://github.com/pytorch/audio/issues/729 (fixed by https://github.com/pytorch/audio/pull/730)
import math

import torch

torch.manual_seed(0)


def complex_norm(complex_tensor, power=1.0):
    return complex_tensor.pow(2.).sum(-1).pow(0.5 * power)


def _stft(x, n_fft, hop_length, win_length, window):
    spec = torch.stft(x, n_fft, hop_length, win_length, window, return_complex=True)
    return torch.view_as_real(spec)


def _istft(spec, n_fft, hop_length, win_length, window, length):
    return torch.istft(torch.view_as_complex(spec.contiguous()), n_fft, hop_length, win_length, window, length=length)


def griffinlim(specgram, window, n_fft, hop_length, win_length, power, n_iter, momentum, length, rand_init):
    assert momentum < 1, 'momentum=%s > 1 can be unstable' % momentum
    assert momentum > 0, 'momentum=%s < 0' % momentum

    shape = specgram.size()
    specgram = specgram.reshape([-1] + list(shape[-2:]))
    specgram = specgram.pow(1 / power)

    batch, freq, frames = specgram.size()
    if rand_init:
        angles = 2 * math.pi * torch.rand(batch, freq, frames)
    else:
        angles = torch.zeros(batch, freq, frames)
    angles = torch.stack([angles.cos(), angles.sin()], dim=-1).to(dtype=specgram.dtype)
    specgram = specgram.unsqueeze(-1).expand_as(angles)

    rebuilt = torch.tensor(0.)
    for _ in range(n_iter):
        tprev = rebuilt
        inverse = _istft(specgram * angles, n_fft, hop_length, win_length, window, length)
        rebuilt = _stft(inverse, n_fft, hop_length, win_length, window)
        angles = rebuilt - tprev * (momentum / (1 + momentum))
        angles = angles.div_(complex_norm(angles).add(1e-16).unsqueeze(-1).expand_as(angles))  # <-- IPL001: complex_norm saved angles for backward

    waveform = _istft(specgram * angles, n_fft, hop_length, win_length, window, length)
    return waveform.reshape(shape[:-2] + waveform.shape[-1:])


class GriffinLim(torch.nn.Module):
    def __init__(self, n_fft=32, n_iter=4, win_length=None, hop_length=None, power=2., momentum=0.99, length=None, rand_init=True):
        super().__init__()
        self.n_fft = n_fft
        self.n_iter = n_iter
        self.win_length = win_length if win_length is not None else n_fft
        self.hop_length = hop_length if hop_length is not None else self.win_length // 2
        self.register_buffer('window', torch.hann_window(self.win_length))
        self.length = length
        self.power = power
        self.momentum = momentum / (1 + momentum)
        self.rand_init = rand_init

    def forward(self, specgram):
        return griffinlim(specgram, self.window, self.n_fft, self.hop_length, self.win_length, self.power,
                          self.n_iter, self.momentum, self.length, self.rand_init)


x = torch.rand(1, 256)
spec = torch.view_as_real(torch.stft(x, 32, 8, 16, torch.hann_window(16), return_complex=True))
mag = spec.pow(2).sum(-1).transpose(1, -1)
model = torch.nn.Linear(17, 17)
out = model(mag).transpose(1, -1).abs() + 1e-3
resyn = GriffinLim(n_fft=32, hop_length=8, win_length=16, length=256)
wav = resyn(out)
optimizer = torch.optim.Adam(model.parameters(), lr=0.0001)
loss = torch.nn.functional.mse_loss(wav, x)
loss.backward()
optimizer.step()
