# label: hazard raises
# why: with a learnable codebook, quantize = einsum(onehot, embed) saves the one-hot assignments for the codebook gradient, and the EMA bookkeeping then zeroes the padded positions of that same tensor in place
# source: https://github.com/lucidrains/vector-quantize-pytorch/pull/247 (commit 82174ed9536c3ed58e2f450464ac88f63f2c2864)
import torch
import torch.nn.functional as F
from torch import einsum, nn

torch.manual_seed(0)


def ema_inplace(old, new, decay, weight=None):
    weight = 1. if weight is None else weight
    new = new.to(old)
    old.data.lerp_(new, (1. - decay) * weight)


def laplace_smoothing(x, n_categories, eps=1e-5, dim=-1):
    denom = x.sum(dim=dim, keepdim=True)
    return (x + eps) / (denom + n_categories * eps)


def gumbel_sample(logits, temperature=1., stochastic=False, straight_through=False, dim=-1, training=True):
    dtype, size = logits.dtype, logits.shape[dim]
    ind = logits.argmax(dim=dim)
    one_hot = F.one_hot(ind, size).type(dtype)
    return ind, one_hot


class EuclideanCodebook(nn.Module):
    def __init__(self, dim, codebook_size, num_codebooks=1, decay=0.8, eps=1e-5, learnable_codebook=True):
        super().__init__()
        self.decay, self.eps = decay, eps
        self.codebook_size = codebook_size
        self.learnable_codebook = learnable_codebook
        embed = torch.randn(num_codebooks, codebook_size, dim)
        self.embed = nn.Parameter(embed)
        self.register_buffer('cluster_size', torch.ones(num_codebooks, codebook_size))
        self.register_buffer('embed_avg', embed.clone())

    def track_cluster_size_and_embed_avg(self, flatten, embed_onehot, mask=None):
        if mask is not None:
            embed_onehot[~mask] = 0.  # <-- IPL001, IPL004: embed_onehot was saved by the quantize einsum (the codebook is learnable) and the caller still owns it

        cluster_size = embed_onehot.sum(dim=1)
        embed_sum = einsum('h n d, h n c -> h c d', flatten, embed_onehot)
        ema_inplace(self.cluster_size, cluster_size, self.decay)
        ema_inplace(self.embed_avg, embed_sum, self.decay)

    def update_ema(self):
        cluster_size = laplace_smoothing(self.cluster_size, self.codebook_size, self.eps) * self.cluster_size.sum(dim=-1, keepdim=True)
        embed_normalized = self.embed_avg / cluster_size.unsqueeze(-1)
        self.embed.data.copy_(embed_normalized)

    def update_codebook(self, flatten, embed_onehot, mask=None):
        self.track_cluster_size_and_embed_avg(flatten, embed_onehot, mask)
        self.update_ema()

    def forward(self, x, mask=None):
        x = x.float()
        x = x.unsqueeze(0)                      # '... -> 1 ...'
        h, b, n, d = x.shape
        flatten = x.reshape(h, b * n, d)        # pack 'h * d'
        if mask is not None:
            mask = mask.reshape(1, b * n)

        embed = self.embed if self.learnable_codebook else self.embed.detach()
        dist = -torch.cdist(flatten, embed)

        embed_ind, embed_onehot = gumbel_sample(dist, dim=-1, training=self.training)
        embed_ind = embed_ind.reshape(h, b, n)

        if self.training:
            unpacked_onehot = embed_onehot.reshape(h, b, n, -1)
            quantize = einsum('h b n c, h c d -> h b n d', unpacked_onehot, embed)
            self.update_codebook(flatten, embed_onehot, mask=mask)
        else:
            quantize = embed[0][embed_ind[0]].unsqueeze(0)

        return quantize.squeeze(0), embed_ind.squeeze(0), dist


codebook = EuclideanCodebook(dim=4, codebook_size=6)
encoder = nn.Linear(3, 4)
x = torch.randn(2, 5, 3)
lens = torch.tensor([5, 3])
mask = torch.arange(5)[None, :] < lens[:, None]

z = encoder(x)
quantize, embed_ind, dist = codebook(z, mask=mask)
commit_loss = F.mse_loss(quantize, z.detach())
recon = quantize + (z - z.detach())
loss = commit_loss + recon.pow(2).mean()
loss.backward()
