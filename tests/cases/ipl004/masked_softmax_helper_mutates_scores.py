# label: hazard silent
# why: masked_softmax fills padding into the caller's `scores` in place and returns the probs; the caller's z-loss then reads the masked logits instead of the raw ones
import torch
import torch.nn as nn

torch.manual_seed(0)


def masked_softmax(scores, pad_mask):
    scores.masked_fill_(pad_mask[:, None, None, :], -1e4)  # <-- IPL004
    return scores.softmax(dim=-1)


class SelfAttention(nn.Module):
    def __init__(self, dim=16, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.z_loss = None

    def forward(self, x, pad_mask):
        B, T, C = x.shape
        qkv = self.qkv(x).reshape(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = (q @ k.transpose(-2, -1)) * (C // self.heads) ** -0.5
        probs = masked_softmax(scores, pad_mask)
        # logit z-loss on the raw attention logits keeps them from drifting
        self.z_loss = torch.logsumexp(scores, dim=-1).pow(2).mean()
        ctx = (probs @ v).transpose(1, 2).reshape(B, T, C)
        return self.out(ctx)


attn = SelfAttention()
x = torch.randn(2, 5, 16)
pad_mask = torch.tensor([[False, False, False, True, True], [False] * 5])
y = attn(x, pad_mask)
loss = y.pow(2).mean() + 1e-3 * attn.z_loss
loss.backward()
z_loss = attn.z_loss.detach()
grad_qkv = attn.qkv.weight.grad.clone()
