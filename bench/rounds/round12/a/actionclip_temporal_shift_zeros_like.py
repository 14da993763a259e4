# label: safe
# why: the default (non in-place) shift copies slices of x into a fresh zeros_like buffer; the slice assignments never touch a tensor that autograd saved
# source: https://github.com/sallymmx/ActionCLIP/issues/26
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class TemporalShift_VIT(nn.Module):
    def __init__(self, net, n_segment=3, n_div=8, inplace=False):
        super().__init__()
        self.net = net
        self.n_segment = n_segment
        self.fold_div = n_div
        self.inplace = inplace

    def forward(self, x):
        x = self.shift(x, self.n_segment, fold_div=self.fold_div, inplace=self.inplace)
        x = self.net(x)
        return x

    @staticmethod
    def shift(x, n_segment, fold_div=3, inplace=False):
        hw, nt, c = x.size()
        cls_ = x[0, :, :].unsqueeze(0)
        x = x[1:, :, :]
        x = x.permute(1, 2, 0)
        n_batch = nt // n_segment
        h = int(np.sqrt(hw - 1))
        w = h
        x = x.contiguous().view(n_batch, n_segment, c, h, w)

        fold = c // fold_div
        if inplace:
            raise NotImplementedError
        else:
            out = torch.zeros_like(x)
            out[:, :-1, :fold] = x[:, 1:, :fold]
            out[:, 1:, fold: 2 * fold] = x[:, :-1, fold: 2 * fold]
            out[:, :, 2 * fold:] = x[:, :, 2 * fold:]
        out = out.contiguous().view(nt, c, h * w)
        out = out.permute(2, 0, 1)
        out = torch.cat((cls_, out), dim=0)
        return out


class ResidualAttentionBlock(nn.Module):
    def __init__(self, d_model, n_head):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, n_head)
        self.ln_1 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_model * 2), nn.GELU(), nn.Linear(d_model * 2, d_model))
        self.ln_2 = nn.LayerNorm(d_model)

    def forward(self, x):
        y = self.ln_1(x)
        x = x + self.attn(y, y, y, need_weights=False)[0]
        x = x + self.mlp(self.ln_2(x))
        return x


blocks = [ResidualAttentionBlock(8, 2) for _ in range(2)]
resblocks = nn.Sequential(*[TemporalShift_VIT(b, n_segment=4, n_div=4) for b in blocks])
tokens = torch.randn(1 + 4, 2 * 4, 8, requires_grad=True)
out = resblocks(tokens)
video_feat = out[0].view(2, 4, 8).mean(1)
loss = video_feat.pow(2).mean()
loss.backward()
