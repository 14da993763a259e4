# label: hazard raises
# why: the suggested masked_fill_ zeroes rows of attn in place, but attn is the softmax output that SoftmaxBackward saved (the merged fix rebinds attn = attn.masked_fill(...))
# source: https://github.com/lucidrains/flamingo-pytorch/issues/10
import torch
from torch import nn, einsum

torch.manual_seed(0)


def exists(val):
    return val is not None


def to_heads(t, h):
    b, n, hd = t.shape
    return t.view(b, n, h, hd // h).transpose(1, 2)


class MaskedCrossAttention(nn.Module):
    def __init__(self, *, dim, dim_head=4, heads=2, only_attend_immediate_media=True):
        super().__init__()
        self.scale = dim_head ** -0.5
        self.heads = heads
        inner_dim = dim_head * heads
        self.norm = nn.LayerNorm(dim)
        self.to_q = nn.Linear(dim, inner_dim, bias=False)
        self.to_kv = nn.Linear(dim, inner_dim * 2, bias=False)
        self.to_out = nn.Linear(inner_dim, dim, bias=False)
        self.only_attend_immediate_media = only_attend_immediate_media

    def forward(self, x, media, media_locations=None):
        b, t, m = media.shape[:3]
        h = self.heads
        x = self.norm(x)
        q = self.to_q(x)
        media = media.reshape(b, t * m, -1)
        k, v = self.to_kv(media).chunk(2, dim=-1)
        q, k, v = (to_heads(z, h) for z in (q, k, v))
        q = q * self.scale
        sim = einsum('... i d, ... j d -> ... i j', q, k)

        if exists(media_locations):
            text_time = media_locations.cumsum(dim=-1)
            media_time = torch.arange(t, device=x.device) + 1
            mask_op = torch.eq if self.only_attend_immediate_media else torch.ge
            text_to_media_mask = mask_op(text_time[:, None, :, None], media_time.repeat_interleave(m)[None, None, None, :])
            sim = sim.masked_fill(~text_to_media_mask, -torch.finfo(sim.dtype).max)

        sim = sim - sim.amax(dim=-1, keepdim=True).detach()
        attn = sim.softmax(dim=-1)

        if exists(media_locations) and self.only_attend_immediate_media:
            # any text without a preceding media needs to have attention zeroed out
            text_without_media_mask = text_time == 0
            text_without_media_mask = text_without_media_mask[:, None, :, None]
            attn.masked_fill_(text_without_media_mask, 0.)  # <-- IPL001: attn is the softmax output saved for backward

        out = einsum('... i j, ... j d -> ... i d', attn, v)
        out = out.transpose(1, 2).reshape(b, -1, h * v.shape[-1])
        return self.to_out(out)


class GatedCrossAttentionBlock(nn.Module):
    def __init__(self, *, dim):
        super().__init__()
        self.attn = MaskedCrossAttention(dim=dim)
        self.attn_gate = nn.Parameter(torch.tensor([0.5]))

    def forward(self, x, media, media_locations=None):
        return self.attn(x, media, media_locations=media_locations) * self.attn_gate.tanh() + x


block = GatedCrossAttentionBlock(dim=8)
text = torch.randn(2, 6, 8)
media = torch.randn(2, 2, 3, 8)
media_locations = torch.tensor([[False, True, False, False, True, False], [True, False, False, False, False, False]])
out = block(text, media, media_locations=media_locations)
loss = out.pow(2).mean()
loss.backward()
