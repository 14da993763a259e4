# label: hazard raises
# why: word_dropout overwrites dropped token ids in the row it is given, a view into the caller's review batch; the embedding lookups of earlier rows saved views of that same batch as indices, so backward finds them modified.
# source: https://github.com/uhauha2929/YelpRating/blob/047d045fdba47064cdc0b86455812c7a3d07742e/models/dan.py (the "fix inplace error" clone)
from typing import Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def word_dropout(inputs: torch.Tensor,
                 padding_id: int = 0,
                 mask: torch.Tensor = None,
                 dropout: float = 0.3,
                 training: bool = True):
    # [b, s]
    if not training:
        return inputs
    prob = torch.rand(inputs.size())
    if mask is not None:
        prob[mask == padding_id] = 1
    inputs[prob < dropout] = padding_id  # <-- IPL004, IPL001: writes into a view of the caller's review batch whose sibling rows the embedding saved
    return inputs


class DeepAveragingNetworks(nn.Module):
    def __init__(self, embedding_dim: int, n_layers: int = 2):
        super().__init__()
        self.embedding_dim = embedding_dim
        self.feedforward = nn.ModuleList([nn.Linear(embedding_dim, embedding_dim) for _ in range(n_layers)])
        self.activation = nn.SELU()

    def get_output_dim(self):
        return self.embedding_dim

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor = None) -> torch.Tensor:
        if mask is None:
            inputs = inputs.mean(-2)
        else:
            inputs = torch.mean(inputs * (mask.float().unsqueeze(-1)), -2)
        for layer in self.feedforward:
            inputs = self.activation(layer(inputs))
        return inputs


class HierarchicalJointModelDAN(nn.Module):
    def __init__(self, vocab_size: int, embedding_size: int, label_size: int = 5):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_size)
        self.sentence_encoder = DeepAveragingNetworks(embedding_size)
        self.review_encoder = DeepAveragingNetworks(self.sentence_encoder.get_output_dim())
        self.product_encoder = DeepAveragingNetworks(self.review_encoder.get_output_dim())
        self.review_feedforward = nn.Sequential(nn.Linear(embedding_size, 1), nn.SELU())
        self.product_feedforward = nn.Sequential(nn.Linear(embedding_size, label_size), nn.SELU())

    def forward(self, inputs: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        p_list = []
        for i, p in enumerate(inputs):
            r_mask = p.sum(-1) != 0
            r_list = []
            for j, r in enumerate(p):
                s_mask = r != 0
                r = word_dropout(r, training=self.training)
                s_embedded = self.embedding(r)
                r_hn = self.sentence_encoder(s_embedded, s_mask)
                r_list.append(r_hn.unsqueeze(0))
            r_batch = torch.cat(r_list, dim=0)
            p_hn = self.review_encoder(r_batch, r_mask)
            p_list.append(p_hn.unsqueeze(0))
        p_batch = torch.cat(p_list, dim=0)
        r_stars = self.review_feedforward(p_batch).squeeze(-1)
        h_n = self.product_encoder(p_batch)
        p_stars = self.product_feedforward(h_n)
        return p_stars, r_stars


model = HierarchicalJointModelDAN(vocab_size=30, embedding_size=8)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
# cached batch: [B=2 products, 3 reviews, 4 sentences, 6 words]
inputs = torch.randint(1, 30, (2, 3, 4, 6))
p_labels = torch.tensor([1, 3])
r_labels = torch.rand(2, 3) * 4

losses = []
for epoch in range(2):
    model.train()
    optimizer.zero_grad()
    p_stars, r_stars = model(inputs)
    loss = F.cross_entropy(p_stars, p_labels) + F.mse_loss(r_stars, r_labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
final_loss = torch.stack(losses)
