# label: safe
# why: the fixed DNN-WPE frontend zeroes padded frames of `enhanced` with masked_fill_; `enhanced` is a fresh subtraction result that no backward formula saved.
# source: https://github.com/espnet/espnet/pull/1273
import torch
import torch.nn as nn

torch.manual_seed(0)


def make_pad_mask(lengths, xs):
    maxlen = xs.size(-1)
    seq_range = torch.arange(maxlen)
    mask = seq_range[None, :] >= lengths[:, None]
    return mask[:, None, None, :].expand_as(xs)


class MaskEstimator(nn.Module):
    def __init__(self, idim):
        super().__init__()
        self.brnn = nn.LSTM(idim, 8, batch_first=True)
        self.linear = nn.Linear(8, idim)

    def forward(self, xs, ilens):
        # xs: (B, F, C, T) -> (B * C, T, F)
        B, F, C, T = xs.shape
        h = xs.permute(0, 2, 3, 1).reshape(B * C, T, F).abs()
        h, _ = self.brnn(h)
        mask = torch.sigmoid(self.linear(h)).reshape(B, C, T, F).permute(0, 3, 1, 2)
        mask = mask.masked_fill(make_pad_mask(ilens, mask), 0)
        return (mask,), ilens


def wpe_one_iteration(data, power, taps, delay, predictor):
    # simplified linear-prediction dereverberation on real-valued STFT magnitudes
    T = data.size(-1)
    padded = torch.nn.functional.pad(data, (taps + delay - 1, 0))
    stacked = torch.stack([padded[..., t:t + T] for t in range(taps)], dim=-1)
    inverse_power = 1.0 / power.clamp(min=1e-6)
    filtered = (stacked * predictor).sum(-1) * inverse_power[:, :, None, :].clamp(max=1.0)
    enhanced = data - filtered
    return enhanced


class DNN_WPE(nn.Module):
    def __init__(self, idim=5, taps=3, delay=1, iterations=2, use_dnn_mask=True, normalization=False):
        super().__init__()
        self.iterations = iterations
        self.taps = taps
        self.delay = delay
        self.normalization = normalization
        self.use_dnn_mask = use_dnn_mask
        self.predictor = nn.Parameter(0.1 * torch.randn(taps))
        if self.use_dnn_mask:
            self.mask_est = MaskEstimator(idim)

    def forward(self, data, ilens):
        # (B, T, C, F) -> (B, F, C, T)
        data = data.permute(0, 3, 2, 1)
        enhanced = data
        mask = None
        for i in range(self.iterations):
            power = enhanced ** 2
            if i == 0 and self.use_dnn_mask:
                (mask,), _ = self.mask_est(enhanced, ilens)
                if self.normalization:
                    mask = mask / mask.sum(dim=-1)[..., None]
                power = power * mask
            power = power.mean(dim=-2)
            enhanced = wpe_one_iteration(data.contiguous(), power, self.taps, self.delay, self.predictor)
            enhanced.masked_fill_(make_pad_mask(ilens, enhanced), 0)
        # (B, F, C, T) -> (B, T, C, F)
        enhanced = enhanced.permute(0, 3, 2, 1)
        return enhanced, ilens, mask


frontend = DNN_WPE()
data = torch.randn(2, 6, 2, 5)
ilens = torch.tensor([6, 4])
enhanced, olens, mask = frontend(data, ilens)
loss = enhanced.pow(2).mean()
loss.backward()
