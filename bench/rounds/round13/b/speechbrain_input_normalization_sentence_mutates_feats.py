# label: hazard silent
# why: sentence-level InputNormalization assigns the normalized rows back into the caller's feature tensor, so the raw features the recipe keeps using afterwards are silently normalized too
# source: https://github.com/speechbrain/speechbrain/pull/2504 (commit eb9c95e30c015c3c4c98338157afae3af8761f7d, issue #2390)
import torch
import torch.nn as nn

torch.manual_seed(0)


class InputNormalization(nn.Module):
    def __init__(self, mean_norm=True, std_norm=True, norm_type="global", avg_factor=None):
        super().__init__()
        self.mean_norm = mean_norm
        self.std_norm = std_norm
        self.norm_type = norm_type
        self.avg_factor = avg_factor
        self.eps = 1e-10

    def _compute_current_stats(self, x):
        if self.mean_norm:
            current_mean = torch.mean(x, dim=0).detach().data
        else:
            current_mean = torch.tensor([0.0], device=x.device)
        if self.std_norm:
            current_std = torch.std(x, dim=0).detach().data
        else:
            current_std = torch.tensor([1.0], device=x.device)
        current_std = torch.max(current_std, self.eps * torch.ones_like(current_std))
        return current_mean, current_std

    def forward(self, x, lengths, spk_ids=torch.tensor([]), epoch=0):
        N_batches = x.shape[0]
        current_means = []
        current_stds = []
        for snt_id in range(N_batches):
            # Avoiding padded time steps
            actual_size = torch.round(lengths[snt_id] * x.shape[1]).int()
            current_mean, current_std = self._compute_current_stats(x[snt_id, 0:actual_size, ...])
            current_means.append(current_mean)
            current_stds.append(current_std)
            if self.norm_type == "sentence":
                x[snt_id] = (x[snt_id] - current_mean.data) / current_std.data  # <-- IPL004: writes into the caller's features
        if self.norm_type == "batch":
            current_mean = torch.mean(torch.stack(current_means), dim=0)
            current_std = torch.mean(torch.stack(current_stds), dim=0)
            x = (x - current_mean.data) / (current_std.data)
        return x


class Fbank(nn.Module):
    def __init__(self, n_mels=6):
        super().__init__()
        self.proj = torch.rand(16, n_mels)

    def forward(self, wavs):
        frames = wavs.unfold(1, 16, 8)
        return torch.log1p(frames.pow(2) @ self.proj)


compute_features = Fbank()
normalize = InputNormalization(norm_type="sentence")
encoder = nn.GRU(6, 8, batch_first=True)
decoder = nn.Linear(8, 6)

wavs = torch.randn(3, 88)
wav_lens = torch.tensor([1.0, 0.8, 0.6])

feats = compute_features(wavs)
normed = normalize(feats, wav_lens)
hidden, _ = encoder(normed)
# auxiliary reconstruction of the raw filterbank energies
recon = decoder(hidden)
recon_loss = ((recon - feats) ** 2).mean()
recon_loss.backward()
