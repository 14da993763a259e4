# label: safe
# why: the fix from the issue (`token = token + self.de_pos_embedding`) leaves the shared quant untouched; the encoder's `x += self.en_pos_embedding` writes a fresh conv output nothing saved
# source: https://github.com/thuanz123/enhancing-transformers/issues/11 (fixed ViTDecoder.forward)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def get_2d_sincos_pos_embed(embed_dim, grid_size):
    grid_h = torch.arange(grid_size[0], dtype=torch.float32)
    grid_w = torch.arange(grid_size[1], dtype=torch.float32)
    grid = torch.stack(torch.meshgrid(grid_w, grid_h, indexing='xy'), dim=0).reshape(2, 1, grid_size[0], grid_size[1])
    emb_h = get_1d_sincos_pos_embed_from_grid(embed_dim // 2, grid[0])
    emb_w = get_1d_sincos_pos_embed_from_grid(embed_dim // 2, grid[1])
    return torch.cat([emb_h, emb_w], dim=1)


def get_1d_sincos_pos_embed_from_grid(embed_dim, pos):
    omega = torch.arange(embed_dim // 2, dtype=torch.float64) / (embed_dim / 2.)
    omega = 1. / 10000**omega
    out = torch.einsum('m,d->md', pos.reshape(-1).double(), omega)
    return torch.cat([torch.sin(out), torch.cos(out)], dim=1)


class PreNorm(nn.Module):
    def __init__(self, dim, fn):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fn = fn

    def forward(self, x, **kwargs):
        return self.fn(self.norm(x), **kwargs)


class FeedForward(nn.Module):
    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden_dim), nn.Tanh(), nn.Linear(hidden_dim, dim))

    def forward(self, x):
        return self.net(x)


class Transformer(nn.Module):
    def __init__(self, dim, depth, mlp_dim):
        super().__init__()
        self.layers = nn.ModuleList([])
        for idx in range(depth):
            self.layers.append(nn.ModuleList([PreNorm(dim, FeedForward(dim, mlp_dim)),
                                              PreNorm(dim, FeedForward(dim, mlp_dim))]))

    def forward(self, x):
        for attn, ff in self.layers:
            x = attn(x) + x
            x = ff(x) + x
        return x


class ViTEncoder(nn.Module):
    def __init__(self, image_size, patch_size, dim, depth, mlp_dim, channels=3):
        super().__init__()
        grid = (image_size // patch_size, image_size // patch_size)
        en_pos_embedding = get_2d_sincos_pos_embed(dim, grid)
        self.to_patch_embedding = nn.Conv2d(channels, dim, kernel_size=patch_size, stride=patch_size)
        self.en_pos_embedding = nn.Parameter(en_pos_embedding.float().unsqueeze(0), requires_grad=False)
        self.transformer = Transformer(dim, depth, mlp_dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, img):
        x = self.to_patch_embedding(img).flatten(2).transpose(1, 2)  # b c h w -> b (h w) c
        x += self.en_pos_embedding
        x = self.transformer(x)
        return self.norm(x)


class ViTDecoder(nn.Module):
    def __init__(self, image_size, patch_size, dim, depth, mlp_dim, channels=3):
        super().__init__()
        self.grid = (image_size // patch_size, image_size // patch_size)
        de_pos_embedding = get_2d_sincos_pos_embed(dim, self.grid)
        self.transformer = Transformer(dim, depth, mlp_dim)
        self.de_pos_embedding = nn.Parameter(de_pos_embedding.float().unsqueeze(0), requires_grad=False)
        self.norm = nn.LayerNorm(dim)
        self.conv_out = nn.ConvTranspose2d(dim, channels, kernel_size=patch_size, stride=patch_size)

    def forward(self, token):
        token = token + self.de_pos_embedding
        x = self.transformer(token)
        x = self.norm(x)
        x = x.transpose(1, 2).reshape(x.shape[0], -1, *self.grid)  # b (h w) c -> b c h w
        return self.conv_out(x)


class VectorQuantizer(nn.Module):
    def __init__(self, embed_dim, n_embed):
        super().__init__()
        self.embedding = nn.Embedding(n_embed, embed_dim)

    def forward(self, z):
        d = torch.cdist(z.reshape(-1, z.shape[-1]), self.embedding.weight)
        z_q = self.embedding(d.argmin(1)).view(z.shape)
        loss = F.mse_loss(z_q, z.detach()) + 0.25 * F.mse_loss(z_q.detach(), z)
        z_q = z + (z_q - z).detach()
        return z_q, loss


encoder = ViTEncoder(image_size=8, patch_size=4, dim=8, depth=1, mlp_dim=16)
quantizer = VectorQuantizer(8, 16)
decoder_a = ViTDecoder(image_size=8, patch_size=4, dim=8, depth=1, mlp_dim=16)
decoder_b = ViTDecoder(image_size=8, patch_size=4, dim=8, depth=1, mlp_dim=16, channels=1)

img = torch.randn(2, 3, 8, 8)
depth_map = torch.randn(2, 1, 8, 8)
quant, emb_loss = quantizer(encoder(img))
rec_a = decoder_a(quant)
rec_b = decoder_b(quant)
loss = F.mse_loss(rec_a, img) + F.mse_loss(rec_b, depth_map) + emb_loss
loss.backward()
