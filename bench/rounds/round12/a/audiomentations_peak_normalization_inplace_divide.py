# label: hazard raises
# why: PeakNormalization divides the selected waveforms in place after torch.abs/torch.max saved the same samples (output of the preceding Gain) for backward, so the augmentation chain is not differentiable
# source: https://github.com/iver56/torch-audiomentations/issues/35
import torch
from torch import Tensor

torch.manual_seed(0)


class ObjectDict(dict):
    def __getattr__(self, name):
        return self[name]


class BaseWaveformTransform(torch.nn.Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p
        self.transform_parameters = {}

    def randomize_parameters(self, samples):
        pass

    def forward(self, samples, sample_rate=None):
        self.transform_parameters = {}
        self.randomize_parameters(samples)
        return self.apply_transform(samples, sample_rate)


class Gain(BaseWaveformTransform):
    def __init__(self, min_gain_in_db=-6.0, max_gain_in_db=12.0, p=1.0):
        super().__init__(p=p)
        self.min_gain_in_db = min_gain_in_db
        self.max_gain_in_db = max_gain_in_db

    def randomize_parameters(self, samples):
        gain_db = torch.empty(samples.shape[0]).uniform_(self.min_gain_in_db, self.max_gain_in_db)
        self.transform_parameters["gain_factors"] = (10.0 ** (gain_db / 20.0)).view(-1, 1, 1)

    def apply_transform(self, samples, sample_rate):
        return ObjectDict(samples=samples * self.transform_parameters["gain_factors"], sample_rate=sample_rate)


class PeakNormalization(BaseWaveformTransform):
    def __init__(self, apply_to="all", p=1.0):
        super().__init__(p=p)
        self.apply_to = apply_to

    def randomize_parameters(self, samples: Tensor) -> None:
        most_extreme_values, _ = torch.max(torch.abs(samples), dim=-1)
        most_extreme_values, _ = torch.max(most_extreme_values, dim=-1)
        if self.apply_to == "all":
            self.transform_parameters["selector"] = most_extreme_values > 0.0
        elif self.apply_to == "only_too_loud_sounds":
            self.transform_parameters["selector"] = most_extreme_values > 1.0
        if self.transform_parameters["selector"].any():
            self.transform_parameters["divisors"] = torch.reshape(
                most_extreme_values[self.transform_parameters["selector"]], (-1, 1, 1))

    def apply_transform(self, samples: Tensor, sample_rate: int) -> ObjectDict:
        if "divisors" in self.transform_parameters:
            samples[self.transform_parameters["selector"]] /= self.transform_parameters["divisors"]  # <-- IPL001: divides samples in place after abs/max saved them
        return ObjectDict(samples=samples, sample_rate=sample_rate)


class Compose(torch.nn.Module):
    def __init__(self, transforms):
        super().__init__()
        self.transforms = torch.nn.ModuleList(transforms)

    def forward(self, samples, sample_rate=None):
        for transform in self.transforms:
            samples = transform(samples, sample_rate=sample_rate).samples
        return ObjectDict(samples=samples, sample_rate=sample_rate)


sample_rate = 16000
augment = Compose(transforms=[Gain(min_gain_in_db=-15.0, max_gain_in_db=5.0, p=1.0),
                              PeakNormalization(p=1.0)])
samples = torch.rand((3, 1, 64)) * 2 - 1
samples.requires_grad = True
augmented = augment(samples=samples, sample_rate=sample_rate).samples
loss = augmented.pow(2).mean()
loss.backward()
samples_grad = samples.grad
