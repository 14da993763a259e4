# label: safe
# why: separate.py normalizes the loaded waveform with wav -= ref.mean(); wav /= ref.std() and rescales the separated sources in place; ref is a separate reduction computed before the writes and apply_model runs under no_grad, so no saved or still-needed value is overwritten.
# source: https://github.com/facebookresearch/demucs/pull/501 (commit 65d2beec87aedefaf77217620bbfbc1bb830f51f, demucs/separate.py)
import torch
import torch.nn as nn

torch.manual_seed(0)


class TinyDemucs(nn.Module):
    def __init__(self, audio_channels=2, sources=4):
        super().__init__()
        self.sources = sources
        self.audio_channels = audio_channels
        self.encoder = nn.Sequential(nn.Conv1d(audio_channels, 8, 5, padding=2), nn.GELU())
        self.decoder = nn.Conv1d(8, sources * audio_channels, 5, padding=2)

    def forward(self, mix):
        x = self.decoder(self.encoder(mix))
        return x.view(mix.shape[0], self.sources, self.audio_channels, -1)


def apply_model(model, mix, shifts=1, split=True, overlap=0.25, segment=None):
    out = 0.
    with torch.no_grad():
        for shift_idx in range(shifts):
            offset = shift_idx * 3
            shifted = torch.roll(mix, offset, dims=-1)
            shifted_out = model(shifted)
            out += torch.roll(shifted_out, -offset, dims=-1)
        out /= shifts
    return out


model = TinyDemucs().eval()
tracks = [torch.randn(2, 64) * 0.3 + 0.05, torch.randn(2, 64) * 0.1]
separated = []
for wav in tracks:
    ref = wav.mean(0)
    wav -= ref.mean()
    wav /= ref.std()
    sources = apply_model(model, wav[None], shifts=2, split=True, overlap=0.25)[0]
    sources *= ref.std()
    sources += ref.mean()
    separated.append(sources)

separated_all = torch.stack(separated)
