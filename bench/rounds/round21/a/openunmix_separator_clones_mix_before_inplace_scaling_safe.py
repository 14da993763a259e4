# label: safe
# why: OpenUnmix.forward shifts/scales a cropped view of its input spectrogram in place (x += input_mean; x *= input_scale), but Separator hands every target model X.detach().clone(), so the shared mixture spectrogram is never mutated; the output scaling writes only a BatchNorm output nothing saved.
# source: https://github.com/sigsep/open-unmix-pytorch/blob/93a7f056e0d83c572d795aa2f26d1f2e8ac41420/openunmix/model.py
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import LSTM, BatchNorm1d, Linear, Parameter

torch.manual_seed(0)


class OpenUnmix(nn.Module):
    def __init__(self, nb_bins=16, nb_channels=2, hidden_size=8, nb_layers=1):
        super(OpenUnmix, self).__init__()
        self.nb_output_bins = nb_bins
        self.nb_bins = nb_bins
        self.hidden_size = hidden_size
        self.fc1 = Linear(self.nb_bins * nb_channels, hidden_size, bias=False)
        self.bn1 = BatchNorm1d(hidden_size)
        self.lstm = LSTM(input_size=hidden_size, hidden_size=hidden_size // 2, num_layers=nb_layers,
                         bidirectional=True, batch_first=False)
        self.fc2 = Linear(in_features=hidden_size * 2, out_features=hidden_size, bias=False)
        self.bn2 = BatchNorm1d(hidden_size)
        self.fc3 = Linear(in_features=hidden_size, out_features=self.nb_output_bins * nb_channels, bias=False)
        self.bn3 = BatchNorm1d(self.nb_output_bins * nb_channels)
        self.input_mean = Parameter(torch.zeros(self.nb_bins))
        self.input_scale = Parameter(torch.ones(self.nb_bins))
        self.output_scale = Parameter(torch.ones(self.nb_output_bins).float())
        self.output_mean = Parameter(torch.ones(self.nb_output_bins).float())

    def forward(self, x):
        # permute so that batch is last for lstm
        x = x.permute(3, 0, 1, 2)
        nb_frames, nb_samples, nb_channels, nb_bins = x.data.shape

        mix = x.detach().clone()

        # crop
        x = x[..., : self.nb_bins]
        # shift and scale input to mean=0 std=1 (across all bins)
        x += self.input_mean
        x *= self.input_scale

        x = self.fc1(x.reshape(-1, nb_channels * self.nb_bins))
        x = self.bn1(x)
        x = x.reshape(nb_frames, nb_samples, self.hidden_size)
        x = torch.tanh(x)

        lstm_out = self.lstm(x)
        x = torch.cat([x, lstm_out[0]], -1)

        x = self.fc2(x.reshape(-1, x.shape[-1]))
        x = self.bn2(x)
        x = F.relu(x)

        x = self.fc3(x)
        x = self.bn3(x)
        x = x.reshape(nb_frames, nb_samples, nb_channels, self.nb_output_bins)

        # apply output scaling
        x *= self.output_scale
        x += self.output_mean

        x = F.relu(x) * mix
        return x.permute(1, 2, 3, 0)


class Separator(nn.Module):
    def __init__(self, target_models):
        super(Separator, self).__init__()
        self.target_models = nn.ModuleDict(target_models)
        self.nb_targets = len(self.target_models)

    def forward(self, X):
        nb_sources = self.nb_targets
        spectrograms = torch.zeros(X.shape + (nb_sources,), dtype=X.dtype)
        for j, (target_name, target_module) in enumerate(self.target_models.items()):
            target_spectrogram = target_module(X.detach().clone())
            spectrograms[..., j] = target_spectrogram
        return spectrograms


def main():
    separator = Separator({"vocals": OpenUnmix(), "drums": OpenUnmix()})
    X = torch.rand(2, 2, 16, 5)  # (nb_samples, nb_channels, nb_bins, nb_frames) magnitude spectrogram
    Y = torch.rand(2, 2, 16, 5, 2)
    estimates = separator(X)
    loss = F.mse_loss(estimates, Y)
    loss.backward()
    return estimates.detach(), X, separator.target_models["vocals"].input_mean.grad


est, mixture_spec, mean_grad = main()
