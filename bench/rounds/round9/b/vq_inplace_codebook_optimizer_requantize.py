# label: safe
# why: the learnable codebook takes its one-step in-place optimizer update inside forward only after that small loss was backpropagated, and then re-quantizes, so the outer graph never saw the pre-update codebook.
# source: https://github.com/lucidrains/vector-quantize-pytorch/pull/54
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import SGD

torch.manual_seed(0)


class EuclideanCodebook(nn.Module):
    def __init__(self, dim, codebook_size):
        super().__init__()
        self.embed = nn.Parameter(torch.randn(codebook_size, dim))

    def forward(self, x):
        dist = -torch.cdist(x, self.embed)
        embed_ind = dist.argmax(dim=-1)
        quantize = F.embedding(embed_ind, self.embed)
        return quantize, embed_ind, dist


class VectorQuantize(nn.Module):
    def __init__(self, dim, codebook_size, in_place_codebook_optimizer=None, commitment_weight=1.0):
        super().__init__()
        self._codebook = EuclideanCodebook(dim, codebook_size)
        self.learnable_codebook = True
        self.commitment_weight = commitment_weight
        self.in_place_codebook_optimizer = in_place_codebook_optimizer(self._codebook.parameters()) if in_place_codebook_optimizer is not None else None

    def forward(self, x):
        quantize, embed_ind, distances = self._codebook(x)
        should_inplace_optimize = self.in_place_codebook_optimizer is not None
        # one step in-place update
        if should_inplace_optimize and self.training:
            loss = F.mse_loss(quantize, x.detach())
            loss.backward()
            self.in_place_codebook_optimizer.step()
            self.in_place_codebook_optimizer.zero_grad()
            # quantize again
            quantize, embed_ind, distances = self._codebook(x)
        commit_quantize = quantize if self.learnable_codebook else quantize.detach()
        commit_loss = F.mse_loss(commit_quantize, x) * self.commitment_weight
        # straight through
        quantize = x + (quantize - x).detach()
        return quantize, embed_ind, commit_loss


encoder = nn.Linear(6, 4)
decoder = nn.Linear(4, 6)
vq = VectorQuantize(dim=4, codebook_size=5, in_place_codebook_optimizer=lambda *args, **kwargs: SGD(*args, **kwargs, lr=0.5))
images = torch.randn(3, 7, 6)
z = encoder(images)
quantized, indices, commit_loss = vq(z)
recon = decoder(quantized)
loss = F.mse_loss(recon, images) + commit_loss
loss.backward()
