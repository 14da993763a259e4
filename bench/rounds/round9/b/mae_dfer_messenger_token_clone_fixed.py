# label: safe
# why: with the fix from the repository the messenger and local tokens are cloned out of x before being normalised, so writing the updated tokens back into x[:, 0] and x[:, 1:] touches nothing saved for backward.
# source: https://github.com/sunlicai/MAE-DFER/issues/15
import torch
import torch.nn as nn

torch.manual_seed(0)


def rearrange_bn(x, b):
    # '(b n) c -> b n c'
    return x.reshape(b, -1, x.shape[-1])


class GeneralAttention(nn.Module):
    def __init__(self, dim, num_heads=2):
        super().__init__()
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(dim, dim * 2)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, context=None):
        B, N, C = x.shape
        context = x if context is None else context
        q = self.q(x).reshape(B, N, self.num_heads, -1).transpose(1, 2)
        k, v = self.kv(context).reshape(B, context.shape[1], 2, self.num_heads, -1).permute(2, 0, 3, 1, 4)
        attn = ((q * self.scale) @ k.transpose(-2, -1)).softmax(dim=-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(B, N, C))


class LGBlock(nn.Module):
    def __init__(self, dim, num_heads=2):
        super().__init__()
        self.first_attn_norm0 = nn.LayerNorm(dim)
        self.first_attn = GeneralAttention(dim, num_heads)
        self.second_attn_norm0 = nn.LayerNorm(dim)
        self.second_attn = GeneralAttention(dim, num_heads)
        self.third_attn_norm0 = nn.LayerNorm(dim)
        self.third_attn_norm1 = nn.LayerNorm(dim)
        self.third_attn = GeneralAttention(dim, num_heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim * 2), nn.GELU(), nn.Linear(dim * 2, dim))
        self.drop_path = nn.Identity()

    def forward(self, x, b):
        bn, s, c = x.shape
        n = bn // b
        ## perform local (intra-region) self-attention
        x = x + self.drop_path(self.first_attn(self.first_attn_norm0(x)))
        ## perform global (inter-region) self-attention on messenger tokens
        messenger_tokens = rearrange_bn(x[:, 0].clone(), b)
        messenger_tokens = messenger_tokens + self.drop_path(self.second_attn(self.second_attn_norm0(messenger_tokens)))
        x[:, 0] = messenger_tokens.reshape(bn, c)
        ## perform local-global interaction
        local_tokens = x[:, 1:].clone().reshape(b, n * (s - 1), c)
        local_tokens = local_tokens + self.drop_path(
            self.third_attn(self.third_attn_norm0(local_tokens), context=self.third_attn_norm1(messenger_tokens))
        )
        x[:, 1:] = local_tokens.reshape(bn, s - 1, c)
        # FFN layer
        x = x + self.drop_path(self.mlp(self.norm2(x)))
        return x


blocks = nn.ModuleList([LGBlock(dim=8) for _ in range(2)])
b = 2
region_tokens = torch.zeros(b * 3, 1, 8)
patches = torch.randn(b * 3, 4, 8)
x = torch.cat([region_tokens, patches], dim=1)
for blk in blocks:
    x = blk(x, b)
loss = x[:, 0].pow(2).mean() + x[:, 1:].mean()
loss.backward()
