# label: safe
# why: ViT.forward adds the positional embedding in place to the output of torch.cat((cls_tokens, x)); cat saves no tensors for backward and the slice of the pos_embedding parameter is only read, so the in-place add disturbs nothing autograd needs.
# source: https://github.com/lucidrains/vit-pytorch/blob/fdaf7f92b957329991032064b1a6abf9d0dc52e0/vit_pytorch/vit.py
import torch
from torch import nn

torch.manual_seed(0)


def pair(t):
    return t if isinstance(t, tuple) else (t, t)


class FeedForward(nn.Module):
    def __init__(self, dim, hidden_dim, dropout=0.):
        super().__init__()
        self.net = nn.Sequential(
            nn.LayerNorm(dim), nn.Linear(dim, hidden_dim), nn.GELU(), nn.Dropout(dropout),
            nn.Linear(hidden_dim, dim), nn.Dropout(dropout),
        )

    def forward(self, x):
        return self.net(x)


class Attention(nn.Module):
    def __init__(self, dim, heads=2, dim_head=8, dropout=0.):
        super().__init__()
        inner_dim = dim_head * heads
        self.heads = heads
        self.scale = dim_head ** -0.5
        self.norm = nn.LayerNorm(dim)
        self.attend = nn.Softmax(dim=-1)
        self.dropout = nn.Dropout(dropout)
        self.to_qkv = nn.Linear(dim, inner_dim * 3, bias=False)
        self.to_out = nn.Sequential(nn.Linear(inner_dim, dim), nn.Dropout(dropout))

    def forward(self, x):
        x = self.norm(x)
        qkv = self.to_qkv(x).chunk(3, dim=-1)
        b, n, _ = x.shape
        q, k, v = map(lambda t: t.reshape(b, n, self.heads, -1).transpose(1, 2), qkv)
        dots = torch.matmul(q, k.transpose(-1, -2)) * self.scale
        attn = self.attend(dots)
        attn = self.dropout(attn)
        out = torch.matmul(attn, v)
        out = out.transpose(1, 2).reshape(b, n, -1)
        return self.to_out(out)


class Transformer(nn.Module):
    def __init__(self, dim, depth, heads, dim_head, mlp_dim, dropout=0.):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.layers = nn.ModuleList([])
        for _ in range(depth):
            self.layers.append(nn.ModuleList([
                Attention(dim, heads=heads, dim_head=dim_head, dropout=dropout),
                FeedForward(dim, mlp_dim, dropout=dropout),
            ]))

    def forward(self, x):
        for attn, ff in self.layers:
            x = attn(x) + x
            x = ff(x) + x
        return self.norm(x)


class ViT(nn.Module):
    def __init__(self, *, image_size, patch_size, num_classes, dim, depth, heads, mlp_dim, pool='cls', channels=3, dim_head=8):
        super().__init__()
        image_height, image_width = pair(image_size)
        patch_height, patch_width = pair(patch_size)
        num_patches = (image_height // patch_height) * (image_width // patch_width)
        patch_dim = channels * patch_height * patch_width
        self.patch_height, self.patch_width = patch_height, patch_width
        num_cls_tokens = 1 if pool == 'cls' else 0
        self.to_patch_embedding = nn.Sequential(nn.LayerNorm(patch_dim), nn.Linear(patch_dim, dim), nn.LayerNorm(dim))
        self.cls_token = nn.Parameter(torch.randn(1, num_cls_tokens, dim))
        self.pos_embedding = nn.Parameter(torch.randn(1, num_patches + num_cls_tokens, dim))
        self.dropout = nn.Dropout(0.)
        self.transformer = Transformer(dim, depth, heads, dim_head, mlp_dim)
        self.pool = pool
        self.mlp_head = nn.Linear(dim, num_classes)

    def patchify(self, img):
        b, c, H, W = img.shape
        p1, p2 = self.patch_height, self.patch_width
        x = img.reshape(b, c, H // p1, p1, W // p2, p2).permute(0, 2, 4, 3, 5, 1)
        return x.reshape(b, (H // p1) * (W // p2), p1 * p2 * c)

    def forward(self, img):
        x = self.to_patch_embedding(self.patchify(img))
        b, n, _ = x.shape
        cls_tokens = self.cls_token.expand(b, -1, -1)
        x = torch.cat((cls_tokens, x), dim=1)
        x += self.pos_embedding[:, :(n + 1)]
        x = self.dropout(x)
        x = self.transformer(x)
        x = x.mean(dim=1) if self.pool == 'mean' else x[:, 0]
        return self.mlp_head(x)


def main():
    v = ViT(image_size=16, patch_size=4, num_classes=5, dim=16, depth=2, heads=2, mlp_dim=32)
    img = torch.randn(2, 3, 16, 16)
    preds = v(img)
    loss = nn.functional.cross_entropy(preds, torch.tensor([1, 3]))
    loss.backward()
    return preds.detach(), v.pos_embedding.grad, v.cls_token.grad


vit_preds, pos_grad, cls_grad = main()
