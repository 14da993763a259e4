# label: safe
# why: the codebook EMA statistics are updated in place (lerp_, .data.copy_) inside forward, but only on buffers that carry no gradient; the quantized output is gathered before the update and the encoder is trained through the straight-through estimator and a commitment loss on detached codes, so nothing saved for backward is stale
# source: https://github.com/lucidrains/vector-quantize-pytorch/commit/1de96c008f57d8ef923f41d25e7681166c0584af
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def ema_inplace(old, new, decay):
    is_mps = str(old.device) == 'mps'
    if not is_mps:
        old.lerp_(new, 1 - decay)
    else:
        old.mul_(decay).add_(new * (1 - decay))


def laplace_smoothing(x, n_categories, eps=1e-5, dim=-1):
    denom = x.sum(dim=dim, keepdim=True)
    return (x + eps) / (denom + n_categories * eps)


def uniform_init(*shape):
    t = torch.empty(shape)
    nn.init.kaiming_uniform_(t)
    return t


def batched_embedding(indices, embeds):
    batch, dim = indices.shape[1], embeds.shape[-1]
    indices = indices.unsqueeze(-1).expand(-1, -1, -1, dim)
    embeds = embeds.unsqueeze(1).expand(-1, batch, -1, -1)
    return embeds.gather(2, indices)


class EuclideanCodebook(nn.Module):
    def __init__(self, dim, codebook_size, num_codebooks=1, decay=0.8, eps=1e-5):
        super().__init__()
        self.decay = decay
        self.eps = eps
        self.codebook_size = codebook_size
        embed = uniform_init(num_codebooks, codebook_size, dim)
        self.register_buffer('cluster_size', torch.zeros(num_codebooks, codebook_size))
        self.register_buffer('embed_avg', embed.clone())
        self.register_buffer('embed', embed)

    def forward(self, x):
        x = x.float()
        x = x.unsqueeze(0)
        h, b, n, d = x.shape
        flatten = x.reshape(h, b * n, d)

        embed = self.embed.detach()
        dist = -torch.cdist(flatten, embed, p=2)
        embed_ind = dist.argmax(dim=-1)
        embed_onehot = F.one_hot(embed_ind, self.codebook_size).type(x.dtype)
        embed_ind = embed_ind.view(h, b, n)

        quantize = batched_embedding(embed_ind, self.embed)

        if self.training:
            cluster_size = embed_onehot.sum(dim=1)
            ema_inplace(self.cluster_size, cluster_size, self.decay)

            embed_sum = torch.einsum('h n d, h n c -> h c d', flatten, embed_onehot)
            ema_inplace(self.embed_avg, embed_sum, self.decay)

            cluster_size = laplace_smoothing(self.cluster_size, self.codebook_size, self.eps) * self.cluster_size.sum(dim=-1, keepdim=True)
            embed_normalized = self.embed_avg / cluster_size.unsqueeze(-1)
            self.embed.data.copy_(embed_normalized)

        quantize, embed_ind = quantize.squeeze(0), embed_ind.squeeze(0)
        return quantize, embed_ind, dist


class VectorQuantize(nn.Module):
    def __init__(self, dim, codebook_size, commitment_weight=1.):
        super().__init__()
        self._codebook = EuclideanCodebook(dim, codebook_size)
        self.commitment_weight = commitment_weight

    def forward(self, x):
        quantize, embed_ind, dist = self._codebook(x)
        loss = torch.tensor([0.], requires_grad=self.training)
        if self.training:
            commit_loss = F.mse_loss(quantize.detach(), x)
            loss = loss + commit_loss * self.commitment_weight
            quantize = x + (quantize - x).detach()
        return quantize, embed_ind, loss


class TinyVQVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(3, 8, 4, 2, 1), nn.ReLU(inplace=True), nn.Conv2d(8, 4, 3, 1, 1))
        self.vq = VectorQuantize(dim=4, codebook_size=16)
        self.dec = nn.Sequential(nn.ConvTranspose2d(4, 8, 4, 2, 1), nn.ReLU(inplace=True), nn.Conv2d(8, 3, 3, 1, 1))

    def forward(self, img):
        z = self.enc(img)
        b, c, hh, ww = z.shape
        z = z.permute(0, 2, 3, 1).reshape(b, hh * ww, c)
        zq, ind, commit = self.vq(z)
        zq = zq.reshape(b, hh, ww, c).permute(0, 3, 1, 2)
        return self.dec(zq), commit


model = TinyVQVAE()
opt = torch.optim.Adam(model.parameters(), lr=3e-4)
images = torch.rand(2, 3, 8, 8)
recon, commit_loss = model(images)
loss = F.mse_loss(recon, images) + commit_loss.sum()
opt.zero_grad()
loss.backward()
opt.step()
