# label: safe
# why: ESPnet's SpecAugment time/freq masks clone the spectrogram before writing the masked bands in place (cloned[0][:, t_zero:mask_end] = ...), so the caller's features, which it still feeds to the clean branch, are never mutated.
# source: https://github.com/espnet/espnet/pull/734
import random
import torch
import torch.nn as nn

torch.manual_seed(0)
random.seed(0)


def time_mask(spec, T=4, num_masks=1, replace_with_zero=False):
    cloned = spec.unsqueeze(0).clone()
    len_spectro = cloned.shape[2]

    for i in range(0, num_masks):
        t = random.randrange(0, T)
        t_zero = random.randrange(0, len_spectro - t)

        # avoids randrange error if values are equal and range is empty
        if (t_zero == t_zero + t):
            return cloned.squeeze(0)

        mask_end = random.randrange(t_zero, t_zero + t)
        if (replace_with_zero):
            cloned[0][:, t_zero:mask_end] = 0
        else:
            cloned[0][:, t_zero:mask_end] = cloned.mean()
    return cloned.squeeze(0)


def freq_mask(spec, F=3, num_masks=1, replace_with_zero=False):
    cloned = spec.unsqueeze(0).clone()
    num_mel_channels = cloned.shape[1]

    for i in range(0, num_masks):
        f = random.randrange(0, F)
        f_zero = random.randrange(0, num_mel_channels - f)

        # avoids randrange error if values are equal and range is empty
        if (f_zero == f_zero + f):
            return cloned.squeeze(0)

        mask_end = random.randrange(f_zero, f_zero + f)
        if (replace_with_zero):
            cloned[0][f_zero:mask_end] = 0
        else:
            cloned[0][f_zero:mask_end] = cloned.mean()
    return cloned.squeeze(0)


def specaug(spec, W=5, F=3, T=4, num_freq_masks=2, num_time_masks=2, replace_with_zero=False):
    return time_mask(freq_mask(spec, F=F, num_masks=num_freq_masks, replace_with_zero=replace_with_zero),
                     T=T, num_masks=num_time_masks, replace_with_zero=replace_with_zero)


class Encoder(nn.Module):
    def __init__(self, idim=8, odim=6):
        super().__init__()
        self.conv = nn.Conv1d(idim, 16, 3, padding=1)
        self.out = nn.Linear(16, odim)

    def forward(self, xs):  # xs: (idim, time)
        h = torch.relu(self.conv(xs.unsqueeze(0)))
        return self.out(h.squeeze(0).transpose(0, 1))


def main():
    enc = Encoder()
    xs = [torch.randn(8, 20) for _ in range(3)]  # fbank features (mel, time)
    loss = 0.0
    for x in xs:
        x_aug = specaug(x)
        clean = enc(x)
        noisy = enc(x_aug)
        loss = loss + (clean - noisy).pow(2).mean() + clean.pow(2).mean()
    loss.backward()
    return loss.detach(), enc.conv.weight.grad, torch.stack(xs)


loss, conv_grad, feats = main()
