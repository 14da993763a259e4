# label: hazard silent
# why: the fused scaled-softmax Function computes its input gradient in place inside output_grads, the very tensor the attention-gradient hook stored for relevance maps, so the saved attention gradients (and the CAM) are silently overwritten.
# source: https://github.com/NVIDIA/apex/issues/1587
import torch
import torch.nn as nn

torch.manual_seed(0)


class ScaledSoftmax(torch.autograd.Function):
    """Fused scale + softmax; backward reuses the incoming gradient buffer like the CUDA kernel."""

    @staticmethod
    def forward(ctx, inputs, scale):
        scale_t = torch.tensor([scale])
        softmax_results = torch.softmax(inputs * scale, dim=-1)
        ctx.save_for_backward(softmax_results, scale_t)
        return softmax_results

    @staticmethod
    def backward(ctx, output_grads):
        softmax_results, scale_t = ctx.saved_tensors
        output_grads.mul_(softmax_results)  # <-- IPL005: backward writes into grad_output in place
        row_sum = output_grads.sum(dim=-1, keepdim=True)
        output_grads.sub_(softmax_results * row_sum).mul_(scale_t[0])  # <-- IPL005: backward writes into grad_output in place
        return output_grads, None


class Attention(nn.Module):
    def __init__(self, dim, num_heads=2):
        super().__init__()
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.attn_gradients = None
        self.attention_map = None

    def save_attn_gradients(self, attn_gradients):
        self.attn_gradients = attn_gradients

    def save_attention_map(self, attention_map):
        self.attention_map = attention_map

    def forward(self, x, register_hook=False):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = ScaledSoftmax.apply(q @ k.transpose(-2, -1), self.scale)
        self.save_attention_map(attn)
        if register_hook:
            attn.register_hook(self.save_attn_gradients)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim * 2), nn.GELU(), nn.Linear(dim * 2, dim))

    def forward(self, x, register_hook=False):
        x = x + self.attn(self.norm1(x), register_hook=register_hook)
        x = x + self.mlp(self.norm2(x))
        return x


dim = 8
blocks = nn.ModuleList([Block(dim) for _ in range(2)])
head = nn.Linear(dim, 3)
tokens = torch.randn(1, 5, dim)
x = tokens
for blk in blocks:
    x = blk(x, register_hook=True)
logits = head(x[:, 0])
one_hot = torch.zeros_like(logits)
one_hot[0, 1] = 1
(logits * one_hot).sum().backward()

cams = []
for blk in blocks:
    grad = blk.attn.attn_gradients
    cam = blk.attn.attention_map.detach()
    cams.append((grad * cam).clamp(min=0).mean(dim=1))
relevance = torch.stack(cams).sum(0)
