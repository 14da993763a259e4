# label: safe
# why: the fix first takes ids = ids.data.clone(), so the in-place masked_fill_ that builds the -100 targets writes into a private copy, not the indices the embedding saved.
# source: https://github.com/thorinf/simple-diffusion-lm/issues/2
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CDCDModel(nn.Module):
    def __init__(self, num_embeddings=12, embedding_dim=4, model_dim=8, num_layers=1):
        super().__init__()
        self.embedding_dim = embedding_dim
        self.embedding = nn.Embedding(num_embeddings, embedding_dim)
        self.time_embed = nn.Linear(1, model_dim)
        self.project = nn.Linear(embedding_dim * 2, model_dim)
        layer = nn.TransformerEncoderLayer(model_dim, 2, 16, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers)
        self.output = nn.Linear(model_dim, num_embeddings)

    def get_embeddings(self, ids):
        e = self.embedding(ids)
        return F.normalize(e, dim=-1) * math.sqrt(self.embedding_dim)

    def forward(self, x, t, attention_mask, x_self_cond=None):
        if x_self_cond is None:
            x_self_cond = torch.zeros_like(x)
        h = self.project(torch.cat([x, x_self_cond], dim=-1)) + self.time_embed(t[:, None, None])
        h = self.encoder(h, src_key_padding_mask=~attention_mask)
        return self.output(h)

    def compute_loss(self, ids, lengths, conditional_mask):
        x = self.get_embeddings(ids)
        t = torch.rand(ids.shape[0]) * 9.0 + 1.0
        x_t = x + torch.randn_like(x) * t[:, None, None]
        length_mask = torch.arange(ids.shape[1])[None, :] < lengths[:, None]
        diff_mask = torch.logical_and(~conditional_mask, length_mask)
        x_t = torch.where(conditional_mask[..., None], x, x_t)
        x_t = x_t / (t[:, None, None] ** 2 + 1).sqrt()
        logits = self(x_t, t, length_mask)
        ids = ids.data.clone()
        ids.masked_fill_(torch.logical_not(diff_mask), -100)
        loss = F.cross_entropy(logits.transpose(1, 2), ids, ignore_index=-100)
        return loss


model = CDCDModel()
ids = torch.randint(0, 12, (3, 6))
lengths = torch.tensor([6, 5, 4])
conditional_mask = torch.zeros(3, 6, dtype=torch.bool)
conditional_mask[:, :2] = True
loss = model.compute_loss(ids, lengths, conditional_mask)
loss.backward()
