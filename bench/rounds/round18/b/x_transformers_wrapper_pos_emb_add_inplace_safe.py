# label: safe
# why: x += pos_emb(x) writes into the token embedding output (and the cls-token concat), which no backward formula saved, so the in-place add is harmless
# source: https://github.com/lucidrains/x-transformers/commit/67da12a3a8b15af08bd56be33ab9bcc1d221b01f
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AbsolutePositionalEmbedding(nn.Module):
    def __init__(self, dim, max_seq_len):
        super().__init__()
        self.emb = nn.Embedding(max_seq_len, dim)

    def forward(self, x):
        t = torch.arange(x.shape[1], device=x.device)
        return self.emb(t)[None, :, :]


class Attention(nn.Module):
    def __init__(self, dim, heads=2):
        super().__init__()
        self.heads = heads
        self.to_qkv = nn.Linear(dim, dim * 3, bias=False)
        self.to_out = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = (t.reshape(b, n, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        dots = torch.einsum('bhid,bhjd->bhij', q, k) * (q.shape[-1] ** -0.5)
        attn = dots.softmax(dim=-1)
        out = torch.einsum('bhij,bhjd->bhid', attn, v)
        return self.to_out(out.transpose(1, 2).reshape(b, n, d))


class AttentionLayers(nn.Module):
    def __init__(self, dim, depth):
        super().__init__()
        self.layers = nn.ModuleList([])
        for _ in range(depth):
            self.layers.append(nn.ModuleList([nn.LayerNorm(dim), Attention(dim), nn.LayerNorm(dim),
                                              nn.Sequential(nn.Linear(dim, dim * 2), nn.GELU(), nn.Linear(dim * 2, dim))]))

    def forward(self, x):
        for norm1, attn, norm2, ff in self.layers:
            x = attn(norm1(x)) + x
            x = ff(norm2(x)) + x
        return x


class TransformerWrapper(nn.Module):
    def __init__(self, num_tokens, max_seq_len, dim, depth, emb_dropout=0.):
        super().__init__()
        self.token_emb = nn.Embedding(num_tokens, dim)
        self.pos_emb = AbsolutePositionalEmbedding(dim, max_seq_len)
        self.emb_dropout = nn.Dropout(emb_dropout)
        self.project_emb = nn.Identity()
        self.attn_layers = AttentionLayers(dim, depth)
        self.norm = nn.LayerNorm(dim)
        self.to_logits = nn.Linear(dim, num_tokens)

    def forward(self, x):
        x = self.token_emb(x)
        x += self.pos_emb(x)
        x = self.emb_dropout(x)
        x = self.project_emb(x)
        x = self.attn_layers(x)
        return self.to_logits(self.norm(x))


class ViTransformerWrapper(nn.Module):
    def __init__(self, image_size, patch_size, dim, depth, num_classes):
        super().__init__()
        num_patches = (image_size // patch_size) ** 2
        self.patch_size = patch_size
        self.pos_embedding = nn.Parameter(torch.randn(1, num_patches + 1, dim))
        self.patch_to_embedding = nn.Linear(3 * patch_size ** 2, dim)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim))
        self.dropout = nn.Dropout(0.)
        self.attn_layers = AttentionLayers(dim, depth)
        self.mlp_head = nn.Linear(dim, num_classes)

    def forward(self, img):
        p = self.patch_size
        b, c, hh, ww = img.shape
        x = img.unfold(2, p, p).unfold(3, p, p).permute(0, 2, 3, 1, 4, 5).reshape(b, -1, c * p * p)
        x = self.patch_to_embedding(x)
        n = x.shape[1]
        cls_tokens = self.cls_token.expand(b, -1, -1)
        x = torch.cat((cls_tokens, x), dim=1)
        x += self.pos_embedding[:, :(n + 1)]
        x = self.dropout(x)
        x = self.attn_layers(x)
        return self.mlp_head(x[:, 0])


lm = TransformerWrapper(num_tokens=20, max_seq_len=8, dim=16, depth=2)
tokens = torch.randint(0, 20, (2, 8))
logits = lm(tokens)
lm_loss = F.cross_entropy(logits[:, :-1].reshape(-1, 20), tokens[:, 1:].reshape(-1))
lm_loss.backward()

vit = ViTransformerWrapper(image_size=8, patch_size=4, dim=16, depth=1, num_classes=3)
img = torch.randn(2, 3, 8, 8)
vit_logits = vit(img)
vit_loss = F.cross_entropy(vit_logits, torch.tensor([0, 2]))
vit_loss.backward()
