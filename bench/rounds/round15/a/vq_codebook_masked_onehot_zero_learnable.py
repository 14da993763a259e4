# label: hazard raises
# why: with a learnable codebook the training quantize = einsum(onehot, embed) saves the one-hot codes for the codebook gradient, and track_cluster_size_and_embed_avg then zeroes the padded rows with embed_onehot[~mask] = 0., so backward through the codebook fails.
# source: https://github.com/lucidrains/vector-quantize-pytorch/commit/82174ed9536c3ed58e2f450464ac88f63f2c2864 (vector_quantize_pytorch.py, "fix(codebook): avoid in-place mask update")
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import einsum

torch.manual_seed(0)


def exists(v):
    return v is not None


def ema_inplace(old, new, decay):
    new = new.to(old)
    old.data.lerp_(new, (1. - decay))


def gumbel_sample(logits, temperature=1., stochastic=False, dim=-1, training=True):
    size = logits.shape[dim]
    ind = logits.argmax(dim=dim)
    one_hot = F.one_hot(ind, size).type(logits.dtype)
    return ind, one_hot


class Codebook(nn.Module):
    def __init__(self, dim, codebook_size, num_codebooks=1, decay=0.8, learnable_codebook=True,
                 threshold_ema_dead_code=0.1, ema_update=False):
        super().__init__()
        self.decay = decay
        self.codebook_size = codebook_size
        self.ema_update = ema_update
        self.has_dead_code_replacement = threshold_ema_dead_code > 0
        self.threshold_ema_dead_code = threshold_ema_dead_code
        self.learnable_codebook = learnable_codebook
        embed = torch.randn(num_codebooks, codebook_size, dim)
        self.register_buffer('cluster_size', torch.ones(num_codebooks, codebook_size))
        self.register_buffer('embed_avg', embed.clone())
        if learnable_codebook:
            self.embed = nn.Parameter(embed)
        else:
            self.register_buffer('embed', embed)

    def track_cluster_size_and_embed_avg(self, flatten, embed_onehot, mask=None):
        if exists(mask):
            embed_onehot[~mask] = 0.  # <-- IPL001: the one-hot codes were saved by the quantize einsum for the codebook gradient

        cluster_size = embed_onehot.sum(dim=1)
        embed_sum = einsum('h n d, h n c -> h c d', flatten, embed_onehot)
        ema_inplace(self.cluster_size, cluster_size, self.decay)
        ema_inplace(self.embed_avg, embed_sum, self.decay)

    def update_codebook(self, flatten, embed_onehot, mask=None):
        if not self.ema_update and not self.has_dead_code_replacement:
            return
        self.track_cluster_size_and_embed_avg(flatten, embed_onehot, mask)
        expired_codes = self.cluster_size < self.threshold_ema_dead_code
        self.num_expired = expired_codes.sum()

    def forward(self, x, mask=None):
        x = x.float()
        x = x.unsqueeze(0)  # '... -> 1 ...'
        h, b, n, d = x.shape
        flatten = x.reshape(h, b * n, d)
        if exists(mask):
            mask = mask.reshape(1, b * n).expand(flatten.shape[0], -1)

        embed = self.embed if self.learnable_codebook else self.embed.detach()
        dist = -torch.cdist(flatten, embed)
        embed_ind, embed_onehot = gumbel_sample(dist, dim=-1, training=self.training)
        embed_ind = embed_ind.reshape(h, b, n)

        if self.training:
            unpacked_onehot = embed_onehot.reshape(h, b, n, -1)
            quantize = einsum('h b n c, h c d -> h b n d', unpacked_onehot, embed)
        else:
            quantize = F.embedding(embed_ind, embed[0])

        if self.training:
            self.update_codebook(flatten, embed_onehot, mask=mask)

        quantize, embed_ind = quantize[0], embed_ind[0]
        return quantize, embed_ind, dist


encoder = nn.Linear(6, 4)
codebook = Codebook(dim=4, codebook_size=5)
codebook.train()

feats = torch.randn(2, 7, 6)
mask = torch.ones(2, 7, dtype=torch.bool)
mask[1, 5:] = False  # padded frames

x = encoder(feats)
quantize, embed_ind, dist = codebook(x, mask=mask)
commit_loss = F.mse_loss(x[mask], quantize.detach()[mask])
codebook_loss = F.mse_loss(quantize[mask], x.detach()[mask])
quantize = x + (quantize - x).detach()
loss = codebook_loss + 0.25 * commit_loss + quantize.pow(2).mean()
loss.backward()
