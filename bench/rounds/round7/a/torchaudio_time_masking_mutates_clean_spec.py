# label: hazard silent
# why: mask_along_axis writes the mask into the caller's spectrogram through a reshape view, so the "clean" spectrogram used as the consistency target is silently masked too.
# source: https://github.com/pytorch/audio/issues/1478
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def mask_along_axis(specgram, mask_param, mask_value, axis):
    shape = specgram.size()
    specgram = specgram.reshape([-1] + list(shape[-2:]))
    value = torch.rand(1) * mask_param
    min_value = torch.rand(1) * (specgram.size(axis) - value)

    mask_start = (min_value.long()).squeeze()
    mask_end = (min_value.long() + value.long()).squeeze()
    assert mask_end - mask_start < mask_param
    if axis == 1:
        specgram[:, mask_start:mask_end] = mask_value
    elif axis == 2:
        specgram[:, :, mask_start:mask_end] = mask_value  # <-- IPL004: writes through a view of the caller's spectrogram
    else:
        raise ValueError('Only Frequency and Time masking are supported')

    specgram = specgram.reshape(shape[:-2] + specgram.shape[-2:])
    return specgram


class _AxisMasking(nn.Module):
    def __init__(self, mask_param, axis, iid_masks):
        super(_AxisMasking, self).__init__()
        self.mask_param = mask_param
        self.axis = axis
        self.iid_masks = iid_masks

    def forward(self, specgram, mask_value=0.):
        return mask_along_axis(specgram, self.mask_param, mask_value, self.axis + specgram.dim() - 3)


class TimeMasking(_AxisMasking):
    def __init__(self, time_mask_param, iid_masks=False):
        super(TimeMasking, self).__init__(time_mask_param, 2, iid_masks)


class Encoder(nn.Module):
    def __init__(self, n_mels=8, hidden=6):
        super().__init__()
        self.conv = nn.Conv1d(n_mels, hidden, 3, padding=1)
        self.proj = nn.Linear(hidden, n_mels)

    def forward(self, spec):
        h = torch.relu(self.conv(spec))
        return self.proj(h.transpose(1, 2)).transpose(1, 2)


fmask = TimeMasking(time_mask_param=6)
encoder = Encoder()
spec = torch.rand(2, 8, 20)  # (batch, n_mels, frames) from MelSpectrogram

masked_spec = fmask(spec)
recon = encoder(masked_spec)
loss = F.mse_loss(recon, spec)  # reconstruct the clean spectrogram from the masked one
loss.backward()
