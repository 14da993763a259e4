# label: hazard silent
# why: The EMA step overwrites the codebook through self.embed.data.copy_() after cdist/einsum saved the detached codebook for backward, so the straight-through gradients w.r.t. the encoder output use the updated codes (the compiled path raised instead).
# source: https://github.com/pytorch/pytorch/issues/121353
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def l2norm(t):
    return F.normalize(t, p=2, dim=-1)


def cdist(x, y):
    x2 = (x ** 2).sum(-1)
    y2 = (y ** 2).sum(-1)
    xy = torch.einsum('b i d, b j d -> b i j', x, y) * -2
    return (x2.unsqueeze(-1) + y2.unsqueeze(-2) + xy).clamp(min=0).sqrt()


def ema_inplace(old, new, decay):
    old.lerp_(new, 1 - decay)


def laplace_smoothing(x, n_categories, eps=1e-5, dim=-1):
    denom = x.sum(dim=dim, keepdim=True)
    return (x + eps) / (denom + n_categories * eps)


def gumbel_sample(logits, temperature=1., straight_through=False, dim=-1, training=True):
    size = logits.shape[dim]
    ind = logits.argmax(dim=dim)
    one_hot = F.one_hot(ind, size).type(logits.dtype)
    if not straight_through or temperature <= 0. or not training:
        return ind, one_hot
    pi1 = (logits / temperature).softmax(dim=dim)
    one_hot = one_hot + pi1 - pi1.detach()
    return ind, one_hot


class EuclideanCodebook(nn.Module):
    def __init__(self, dim, codebook_size, num_codebooks=1, decay=0.8, eps=1e-5,
                 learnable_codebook=False, straight_through=True):
        super().__init__()
        self.decay = decay
        self.eps = eps
        self.codebook_size = codebook_size
        self.learnable_codebook = learnable_codebook
        self.straight_through = straight_through
        embed = torch.randn(num_codebooks, codebook_size, dim)
        self.register_buffer('cluster_size', torch.zeros(num_codebooks, codebook_size))
        self.register_buffer('embed_avg', embed.clone())
        self.register_buffer('embed', embed)

    def forward(self, x):
        flatten = x.unsqueeze(0) if x.ndim < 3 else x
        embed = self.embed if self.learnable_codebook else self.embed.detach()

        dist = -cdist(flatten, embed)
        embed_ind, embed_onehot = gumbel_sample(dist, straight_through=self.straight_through, training=self.training)
        quantize = torch.einsum('h n c, h c d -> h n d', embed_onehot, embed)

        if self.training:
            cluster_size = embed_onehot.sum(dim=1)
            ema_inplace(self.cluster_size.data, cluster_size.detach(), self.decay)
            embed_sum = torch.einsum('h n d, h n c -> h c d', flatten, embed_onehot).detach()
            ema_inplace(self.embed_avg.data, embed_sum, self.decay)
            cluster_size = laplace_smoothing(self.cluster_size, self.codebook_size, self.eps) * self.cluster_size.sum(dim=-1, keepdim=True)
            embed_normalized = self.embed_avg / cluster_size.unsqueeze(-1)
            self.embed.data.copy_(embed_normalized)  # <-- IPL007: codebook saved by cdist/einsum for backward is overwritten via .data

        return quantize.squeeze(0), embed_ind.squeeze(0)


class VectorQuantize(nn.Module):
    def __init__(self, dim, codebook_size, commitment_weight=1.):
        super().__init__()
        self.project_in = nn.Linear(dim, dim)
        self.project_out = nn.Linear(dim, dim)
        self._codebook = EuclideanCodebook(dim, codebook_size)
        self.commitment_weight = commitment_weight

    def forward(self, x):
        x = self.project_in(x)
        quantize, embed_ind = self._codebook(x)
        commit_loss = F.mse_loss(quantize.detach(), x)
        quantize = self.project_out(quantize)
        return quantize, embed_ind, commit_loss * self.commitment_weight


vq = VectorQuantize(dim=4, codebook_size=6).train()
x = torch.randn(10, 4, requires_grad=True)
target = torch.randn(10, 4)

quantized, indices, commit_loss = vq(x)
loss = F.mse_loss(quantized, target) + commit_loss
loss.backward()
x_grad = x.grad
