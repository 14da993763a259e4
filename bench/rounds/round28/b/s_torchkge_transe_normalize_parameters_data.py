# label: safe no-twin
# why: TransE re-normalizes the entity embedding table through .data only after optimizer.step(), i.e. between iterations when no graph references the weight, and the scoring function itself normalizes out-of-place, so gradients are unaffected.
# source: https://github.com/torchkge-team/torchkge/issues/252
import torch
import torch.nn as nn
from torch.nn.functional import normalize

torch.manual_seed(0)


def init_embedding(n_vectors, dim):
    entity_embeddings = nn.Embedding(n_vectors, dim)
    nn.init.xavier_uniform_(entity_embeddings.weight.data)
    return entity_embeddings


class TransEModel(nn.Module):
    def __init__(self, emb_dim, n_entities, n_relations):
        super().__init__()
        self.emb_dim = emb_dim
        self.n_ent, self.n_rel = n_entities, n_relations
        self.ent_emb = init_embedding(self.n_ent, self.emb_dim)
        self.rel_emb = init_embedding(self.n_rel, self.emb_dim)
        self.normalize_parameters()
        self.rel_emb.weight.data = normalize(self.rel_emb.weight.data, p=2, dim=1)

    def dissimilarity(self, a, b):
        return torch.norm(a - b, p=2, dim=-1) ** 2

    def scoring_function(self, h_idx, t_idx, r_idx):
        h = normalize(self.ent_emb(h_idx), p=2, dim=1)
        t = normalize(self.ent_emb(t_idx), p=2, dim=1)
        r = self.rel_emb(r_idx)
        return -self.dissimilarity(h + r, t)

    def forward(self, heads, tails, relations, negative_heads, negative_tails):
        pos = self.scoring_function(heads, tails, relations)
        neg = self.scoring_function(negative_heads, negative_tails, relations)
        return pos, neg

    def normalize_parameters(self):
        self.ent_emb.weight.data = normalize(self.ent_emb.weight.data, p=2, dim=1)


class MarginLoss(nn.Module):
    def __init__(self, margin):
        super().__init__()
        self.loss = nn.MarginRankingLoss(margin=margin, reduction="sum")

    def forward(self, positive_triplets, negative_triplets):
        return self.loss(positive_triplets, negative_triplets, target=torch.ones_like(positive_triplets))


class Trainer:
    def __init__(self, model, criterion, optimizer):
        self.model, self.criterion, self.optimizer = model, criterion, optimizer

    def process_batch(self, h, t, r):
        self.optimizer.zero_grad()
        n_h = torch.randint(0, self.model.n_ent, h.shape)
        n_t = torch.randint(0, self.model.n_ent, t.shape)
        p, n = self.model(h, t, r, n_h, n_t)
        loss = self.criterion(p, n)
        loss.backward()
        self.optimizer.step()
        return loss.detach()

    def run(self, n_epochs, batches):
        losses = []
        for epoch in range(n_epochs):
            running_loss = 0.0
            for h, t, r in batches:
                running_loss = running_loss + self.process_batch(h, t, r)
            self.model.normalize_parameters()
            losses.append(running_loss)
        return torch.stack(losses)


def main():
    model = TransEModel(emb_dim=8, n_entities=20, n_relations=4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    trainer = Trainer(model, MarginLoss(margin=1.0), optimizer)
    batches = [(torch.randint(0, 20, (6,)), torch.randint(0, 20, (6,)), torch.randint(0, 4, (6,))) for _ in range(3)]
    losses = trainer.run(2, batches)
    return losses, model.ent_emb.weight.detach().clone()


losses, ent_weight = main()
