# label: safe
# why: the temporal channel shift clones the attention features before writing shifted slices into the copy (out[:, 1:, ..., :fold] = feat[:, :-1, ..., :fold]); the source feat, a view of the qkv projection, is only read, so nothing saved for backward is overwritten.
# source: https://github.com/MartinXM/TPS/issues/6
import torch
import torch.nn as nn

torch.manual_seed(0)


class TemporalShift(nn.Module):
    def __init__(self, n_div=8):
        super(TemporalShift, self).__init__()
        self.fold_div = n_div

    def forward(self, x, frame_len):
        x = self.shift(x, fold_div=self.fold_div, frame_len=frame_len)
        return x

    @staticmethod
    def shift(x, fold_div=8, frame_len=8):
        B, num_heads, N, c = x.size()
        fold = c // fold_div
        feat = x
        feat = feat.view(B // frame_len, frame_len, -1, num_heads, N, c)
        out = feat.clone()

        out[:, 1:, :, :, :, :fold] = feat[:, :-1, :, :, :, :fold]  # shift left
        out[:, :-1, :, :, :, fold:2 * fold] = feat[:, 1:, :, :, :, fold:2 * fold]  # shift right

        out = out.view(B, num_heads, N, c)

        return out


class WindowAttention3D(nn.Module):
    def __init__(self, dim=16, num_heads=2, shift_div=4):
        super().__init__()
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.tps = TemporalShift(n_div=shift_div)

    def forward(self, x, frame_len):
        B_, N, C = x.shape
        qkv = self.qkv(x).reshape(B_, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        k = self.tps(k, frame_len)
        v = self.tps(v, frame_len)
        attn = (q * self.scale) @ k.transpose(-2, -1)
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B_, N, C)
        return self.proj(x)


def main():
    frame_len = 4
    attn = WindowAttention3D()
    x = torch.randn(2 * frame_len, 6, 16, requires_grad=True)  # (B*T windows, tokens, C)
    out = attn(x, frame_len)
    loss = out.pow(2).mean()
    loss.backward()
    return loss.detach(), x.grad, attn.qkv.weight.grad


loss, x_grad, qkv_grad = main()
