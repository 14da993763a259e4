# label: hazard silent
# why: threshold.At writes UNVOICED into the pitch tensor it was given, so the caller's raw pitch (later used for the periodicity-weighted mean) is silently overwritten too.
# source: https://github.com/maxrmorrison/torchcrepe/issues/9
import torch
from torch import nn

torch.manual_seed(0)

UNVOICED = float("nan")


class At:
    """Simple thresholding at a specified probability value"""

    def __init__(self, value):
        self.value = value

    def __call__(self, pitch, periodicity):
        pitch[periodicity < self.value] = UNVOICED  # <-- IPL004: mutates the caller's pitch tensor
        return pitch


class PitchHead(nn.Module):
    def __init__(self, frames=6, bins=16):
        super().__init__()
        self.fc = nn.Linear(bins, bins)
        self.cents = torch.linspace(2000.0, 6000.0, bins)

    def forward(self, activations):
        probs = self.fc(activations).softmax(-1)
        periodicity, bins = probs.max(-1)
        pitch = 10 * 2 ** (self.cents[bins] / 1200)
        return pitch, periodicity


head = PitchHead()
with torch.no_grad():
    pitch, periodicity = head(torch.randn(6, 16))
    voiced_pitch = At(0.21)(pitch, periodicity)
    weighted_mean_pitch = (pitch * periodicity).sum() / periodicity.sum()
    n_unvoiced = torch.isnan(voiced_pitch).sum()
