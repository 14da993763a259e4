# label: hazard silent
# why: audtorch's mask() fills narrowed views of the caller's spectrogram in place and returns the same tensor, so the clean reconstruction target of the masked-spectrogram autoencoder is masked as well
# source: https://github.com/audeering/audtorch/pull/39
import torch
import torch.nn as nn

torch.manual_seed(0)


def mask(signal, num_blocks, max_width, *, value=0., axis=-1):
    signal_size = signal.shape[axis]
    widths = torch.randint(low=1, high=max_width + 1, size=(num_blocks,))
    start = torch.LongTensor(
        [torch.randint(0, signal_size - widths[i].item(), (1,)) for i in range(num_blocks)])
    for i, s in enumerate(start):
        signal.narrow(start=s.item(), length=widths[i].item(), dim=axis).fill_(value)  # <-- IPL004: masks the caller's spectrogram in place
    return signal


class MaskSpectrogramTime(object):
    def __init__(self, coverage, max_width=5, value=0.):
        self.coverage = coverage
        self.max_width = max_width
        self.value = value

    def __call__(self, spectrogram):
        num_blocks = max(1, int(self.coverage * spectrogram.shape[-1] / self.max_width))
        return mask(spectrogram, num_blocks, self.max_width, value=self.value, axis=-1)


class DenoisingAutoencoder(nn.Module):
    def __init__(self, n_mels=8):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv1d(n_mels, 16, 3, padding=1), nn.ReLU())
        self.decoder = nn.Conv1d(16, n_mels, 3, padding=1)

    def forward(self, x):
        return self.decoder(self.encoder(x))


model = DenoisingAutoencoder()
transform = MaskSpectrogramTime(coverage=0.3, max_width=4)
spectrogram = torch.rand(2, 8, 20)
target = spectrogram
masked = transform(spectrogram)
reconstruction = model(masked)
loss = nn.functional.mse_loss(reconstruction, target)
loss.backward()
