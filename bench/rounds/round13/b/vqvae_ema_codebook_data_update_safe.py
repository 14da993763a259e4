# label: safe
# why: the EMA statistics are updated in place under no_grad and the codebook is replaced through .data after the nearest-neighbour lookup, and no gradient depends on the old codebook values
# source: https://github.com/maxjcohen/vqvae/issues/1
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class EMACodebook(nn.Module):
    def __init__(self, num_codebook, dim_codebook, decay=0.99, eps=1e-5):
        super().__init__()
        self.register_buffer("weight", torch.randn(num_codebook, dim_codebook))
        self.decay = decay
        self.eps = eps
        self.register_buffer("ema_cluster_size", torch.zeros(num_codebook))
        self.register_buffer("ema_positions", self.weight.detach().clone())

    def quantize(self, encodings):
        distances = torch.cdist(encodings, self.weight)
        return distances.argmin(dim=-1)

    def codebook_lookup(self, indices):
        return F.embedding(indices, self.weight)

    @torch.no_grad()
    def update(self, encodings, indices):
        onehot = F.one_hot(indices, self.weight.shape[0]).type(encodings.dtype)
        self.ema_cluster_size.mul_(self.decay).add_((1 - self.decay) * onehot.sum(0))
        n = self.ema_cluster_size.sum()
        self.ema_cluster_size.add_(self.eps).div_(n + self.weight.shape[0] * self.eps).mul_(n)
        self.ema_positions.mul_(self.decay).add_((1 - self.decay) * onehot.t() @ encodings)
        self.weight.data.copy_(self.ema_positions / self.ema_cluster_size.unsqueeze(-1))

    def forward(self, encodings):
        indices = self.quantize(encodings)
        quantized = self.codebook_lookup(indices)
        if self.training:
            self.update(encodings.detach(), indices)
        # straight-through estimator
        return encodings + (quantized - encodings).detach(), quantized


encoder = nn.Linear(6, 4)
decoder = nn.Linear(4, 6)
codebook = EMACodebook(num_codebook=5, dim_codebook=4)
x = torch.randn(10, 6)

encodings = encoder(x)
quantized_st, quantized = codebook(encodings)
reconstruction = decoder(quantized_st)
commitment_loss = F.mse_loss(encodings, quantized.detach())
loss = F.mse_loss(reconstruction, x) + 0.25 * commitment_loss
loss.backward()
