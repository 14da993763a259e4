# label: hazard silent
# why: on CPU mel_spec.to(device) returns the caller's tensor and transpose gives a view, so InputNormalization's per-sentence slice assignment normalizes the caller's mel spectrogram in place.
# source: https://github.com/speechbrain/speechbrain/issues/2390
import torch
from torch.nn.functional import mse_loss

torch.manual_seed(0)


class InputNormalization(torch.nn.Module):
    def __init__(self, norm_type="sentence", std_norm=True, eps=1e-10):
        super().__init__()
        self.norm_type = norm_type
        self.std_norm = std_norm
        self.eps = eps

    def _compute_current_stats(self, x):
        current_mean = torch.mean(x, dim=0).detach()
        if self.std_norm:
            current_std = torch.std(x, dim=0).detach()
        else:
            current_std = torch.tensor([1.0], device=x.device)
        current_std = torch.max(current_std, self.eps * torch.ones_like(current_std))
        return current_mean, current_std

    def forward(self, x, lengths):
        N_batches = x.shape[0]
        for snt_id in range(N_batches):
            actual_size = torch.round(lengths[snt_id] * x.shape[1]).int()
            current_mean, current_std = self._compute_current_stats(x[snt_id, 0:actual_size, ...])
            if self.norm_type == "sentence":
                x[snt_id] = (x[snt_id] - current_mean.data) / current_std.data  # <-- IPL004: writes the normalized sentence into the caller's mel spectrogram
        return x


class EmbeddingModel(torch.nn.Module):
    def __init__(self, n_mels=6, lin_neurons=4):
        super().__init__()
        self.conv = torch.nn.Conv1d(n_mels, 8, 3, padding=1)
        self.fc = torch.nn.Linear(16, lin_neurons)

    def forward(self, x, lengths=None):
        h = torch.relu(self.conv(x.transpose(1, 2)))
        stats = torch.cat([h.mean(-1), h.std(-1)], 1)
        return self.fc(stats).unsqueeze(1)


class MelSpectrogramEncoder:
    def __init__(self, device="cpu"):
        self.device = device
        self.mods = torch.nn.ModuleDict(
            {"normalizer": InputNormalization(norm_type="sentence", std_norm=False), "embedding_model": EmbeddingModel()}
        ).eval()

    def mel_spectogram(self, audio):
        frames = audio.unfold(-1, 16, 8)
        spec = torch.fft.rfft(frames * torch.hann_window(16), dim=-1).abs() ** 2
        fb = torch.linspace(0, 1, spec.shape[-1] * 6).view(spec.shape[-1], 6)
        return torch.log(spec @ fb + 1e-5).transpose(-1, -2)[0]

    def encode_mel_spectrogram(self, mel_spec, lens=None):
        if len(mel_spec.shape) == 2:
            mel_spec = mel_spec.unsqueeze(0)
        if lens is None:
            lens = torch.ones(mel_spec.shape[0], device=self.device)
        mel_spec, lens = mel_spec.to(self.device), lens.to(self.device)
        mel_spec = torch.transpose(mel_spec, 2, 1)
        with torch.no_grad():
            feats = self.mods.normalizer(mel_spec, lens)
            embeddings = self.mods.embedding_model(feats, lens)
        return embeddings.squeeze(1)


spk_emb_encoder = MelSpectrogramEncoder(device="cpu")
waveform = torch.randn(1, 128)
mel = spk_emb_encoder.mel_spectogram(waveform)
mel_copy = torch.clone(mel)
spkr_emb = spk_emb_encoder.encode_mel_spectrogram(mel_copy)
mel_drift = mse_loss(mel, mel_copy)
