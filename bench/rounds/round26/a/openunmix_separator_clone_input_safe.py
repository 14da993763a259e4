# label: safe
# why: OpenUnmix.forward shifts and scales a slice of its input spectrogram in place (`x += self.input_mean`, `x *= self.input_scale`), but the Separator hands every target model its own `X.detach().clone()`, so the shared mixture spectrogram X is never rewritten.
# source: https://github.com/sigsep/open-unmix-pytorch/blob/ff5b767a68f4b8a077d1e45570d3c14faf304564/openunmix/model.py
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from torch.nn import LSTM, BatchNorm1d, Linear, Parameter

torch.manual_seed(0)


class OpenUnmix(nn.Module):
    def __init__(self, nb_bins=8, nb_channels=1, hidden_size=8, nb_layers=1, unidirectional=False, max_bin=6):
        super(OpenUnmix, self).__init__()
        self.nb_output_bins = nb_bins
        self.nb_bins = max_bin if max_bin else self.nb_output_bins
        self.hidden_size = hidden_size
        self.fc1 = Linear(self.nb_bins * nb_channels, hidden_size, bias=False)
        self.bn1 = BatchNorm1d(hidden_size)
        lstm_hidden_size = hidden_size if unidirectional else hidden_size // 2
        self.lstm = LSTM(input_size=hidden_size, hidden_size=lstm_hidden_size, num_layers=nb_layers,
                         bidirectional=not unidirectional, batch_first=False)
        self.fc2 = Linear(in_features=hidden_size * 2, out_features=hidden_size, bias=False)
        self.bn2 = BatchNorm1d(hidden_size)
        self.fc3 = Linear(in_features=hidden_size, out_features=self.nb_output_bins * nb_channels, bias=False)
        self.bn3 = BatchNorm1d(self.nb_output_bins * nb_channels)
        self.input_mean = Parameter(torch.randn(self.nb_bins) * 0.1)
        self.input_scale = Parameter(torch.ones(self.nb_bins))
        self.output_scale = Parameter(torch.ones(self.nb_output_bins).float())
        self.output_mean = Parameter(torch.ones(self.nb_output_bins).float())

    def forward(self, x: Tensor) -> Tensor:
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


class ComplexNorm(nn.Module):
    def forward(self, spec: Tensor) -> Tensor:
        return torch.sqrt(spec[..., 0] ** 2 + spec[..., 1] ** 2)


class Separator(nn.Module):
    def __init__(self, target_models):
        super(Separator, self).__init__()
        self.complexnorm = ComplexNorm()
        self.target_models = nn.ModuleDict(target_models)
        self.nb_targets = len(self.target_models)

    def forward(self, mix_stft: Tensor) -> Tensor:
        nb_sources = self.nb_targets
        X = self.complexnorm(mix_stft)
        spectrograms = torch.zeros(X.shape + (nb_sources,), dtype=X.dtype)
        for j, (target_name, target_module) in enumerate(self.target_models.items()):
            # apply current model to get the source spectrogram
            target_spectrogram = target_module(X.detach().clone())
            spectrograms[..., j] = target_spectrogram
        return X, spectrograms


def main():
    separator = Separator({"vocals": OpenUnmix(), "drums": OpenUnmix()})
    mix_stft = torch.randn(2, 1, 8, 5, 2)
    X, spectrograms = separator(mix_stft)
    loss = F.mse_loss(spectrograms.sum(-1), X)
    loss.backward()
    return X, spectrograms.detach(), separator.target_models["drums"].input_mean.grad


X, spectrograms, drums_input_mean_grad = main()
