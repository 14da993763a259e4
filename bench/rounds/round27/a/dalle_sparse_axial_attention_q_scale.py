# label: hazard raises
# why: q comes from to_qkv(x).chunk(3) and, with batch size 1, the (b h) rearrange is still a view of that multi-output chunk, so q *= self.scale writes in place into a view whose base SplitBackward must keep intact and autograd refuses it.
# source: https://github.com/lucidrains/DALLE-pytorch/commit/f2a53e94c016888fe9ca9e6a3028ea77a1dc2f48
import torch
import torch.nn.functional as F
from torch import einsum, nn

torch.manual_seed(0)


def exists(val):
    return val is not None


def default(val, d):
    if exists(val):
        return val
    return d() if callable(d) else d


def max_neg_value(t):
    return -torch.finfo(t.dtype).max


def split_heads(t, h):
    # rearrange(t, 'b n (h d) -> (b h) n d', h = h)
    b, n, hd = t.shape
    return t.reshape(b, n, h, hd // h).permute(0, 2, 1, 3).reshape(b * h, n, hd // h)


def merge_heads(t, h):
    # rearrange(out, '(b h) n d -> b n (h d)', h = h)
    bh, n, d = t.shape
    return t.reshape(bh // h, h, n, d).permute(0, 2, 1, 3).reshape(bh // h, n, h * d)


class SparseAxialCausalAttention(nn.Module):
    def __init__(self, dim, seq_len, image_size=4, axis=0, heads=2, dim_head=8, dropout=0.):
        super().__init__()
        assert axis in {0, 1}, 'axis must be either 0 (along height) or 1 (along width)'
        self.axis = axis
        inner_dim = dim_head * heads
        self.seq_len = seq_len
        self.heads = heads
        self.scale = dim_head ** -0.5
        self.image_size = image_size
        self.to_qkv = nn.Linear(dim, inner_dim * 3, bias=False)
        self.to_out = nn.Sequential(nn.Linear(inner_dim, dim), nn.Dropout(dropout))

    def forward(self, x, mask=None, rotary_pos_emb=None):
        b, n, _, h, img_size, axis, seq_len, device = *x.shape, self.heads, self.image_size, self.axis, self.seq_len, x.device
        softmax = torch.softmax

        img_seq_len = img_size ** 2
        text_len = seq_len + 1 - img_seq_len

        # padding
        padding = seq_len - n + 1
        mask = default(mask, lambda: torch.ones(b, text_len, device=device).bool())
        x = F.pad(x, (0, 0, 0, padding), value=0)
        mask = mask[:, :text_len]

        # derive queries / keys / values
        qkv = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = map(lambda t: split_heads(t, h), qkv)

        q *= self.scale  # <-- IPL001

        ((q_text, q_img), (k_text, k_img), (v_text, v_img)) = map(lambda t: (t[:, :-img_seq_len], t[:, -img_seq_len:]), (q, k, v))

        # text attention
        dots_text = einsum('b i d, b j d -> b i j', q_text, k_text)
        mask_value = max_neg_value(dots_text)
        i, j = dots_text.shape[-2:]
        text_causal_mask = torch.ones(i, j, device=device).triu_(j - i + 1).bool()
        dots_text.masked_fill_(text_causal_mask, mask_value)
        attn_text = softmax(dots_text, dim=-1)
        out_text = einsum('b i j, b j d -> b i d', attn_text, v_text)

        # image attention: split out axis ('b (h w) c -> b h w c')
        q_img, k_img, v_img = map(lambda t: t.reshape(t.shape[0], img_size, img_size, t.shape[-1]), (q_img, k_img, v_img))
        dots_image_to_image = einsum('b x i d, b x j d -> b x i j', q_img, k_img)
        dots_image_to_text = einsum('b x i d, b j d -> b x i j', q_img, k_text)
        dots = torch.cat((dots_image_to_text, dots_image_to_image), dim=-1)

        # mask so image has full attention to text, but causal along axis
        bh, x_, i, j = dots.shape
        causal_mask = torch.ones(i, img_size, device=device).triu_(img_size - i + 1).bool()
        causal_mask = causal_mask[None, None].expand(bh, x_, i, img_size)
        text_mask = (~mask).repeat_interleave(h, dim=0)[:, None, None, :].expand(bh, x_, i, text_len)
        full_mask = torch.cat((text_mask, causal_mask), dim=-1)
        dots.masked_fill_(full_mask, mask_value)

        attn = softmax(dots, dim=-1)
        attn_image_to_text, attn_image_to_image = attn[..., :text_len], attn[..., text_len:]
        out_image_to_image = einsum('b x i j, b x j d -> b x i d', attn_image_to_image, v_img)
        out_image_to_text = einsum('b x i j, b j d -> b x i d', attn_image_to_text, v_text)
        out_image = out_image_to_image + out_image_to_text

        # merge back axis ('b x n d -> b (x n) d')
        out_image = out_image.reshape(out_image.shape[0], -1, out_image.shape[-1])

        # combine attended values for both text and image
        out = torch.cat((out_text, out_image), dim=1)
        out = merge_heads(out, h)
        out = self.to_out(out)
        return out[:, :n]


def main():
    dim, text_seq_len, image_size = 16, 4, 4
    seq_len = text_seq_len + image_size ** 2
    attn = SparseAxialCausalAttention(dim, seq_len, image_size=image_size, heads=2, dim_head=8)
    token_emb = nn.Embedding(32, dim)
    tokens = torch.randint(0, 32, (1, seq_len))
    x = token_emb(tokens)
    out = attn(x)
    loss = out.pow(2).mean()
    loss.backward()
    return loss.detach(), attn.to_qkv.weight.grad, token_emb.weight.grad


loss, qkv_grad, emb_grad = main()
