# label: hazard raises
# why: SoftplusLoss computes log(1 + exp(x)) as `scores = torch.exp(scores)` followed by `scores += 1.`; the in-place add overwrites the exp output that ExpBackward saved, so loss.backward() raises when training the embeddings.
# source: https://github.com/pykeen/pykeen/commit/4481303e488cce1d75862796882eb2e409170f15
import torch
import torch.nn as nn
from torch.nn.modules.loss import _Loss

torch.manual_seed(0)


class SoftplusLoss(_Loss):

    def __init__(self, reduction='mean'):
        super(SoftplusLoss, self).__init__(reduction=reduction)

    def forward(self, scores, labels):
        """."""
        labels = labels * (-1)
        scores = labels * scores
        scores = torch.exp(scores)
        scores += 1.  # <-- IPL001

        scores = torch.log(scores)
        loss = torch.mean(scores) if self.reduction == 'mean' else torch.sum(scores)

        return loss


class DistMult(nn.Module):
    def __init__(self, num_entities, num_relations, embedding_dim=16):
        super().__init__()
        self.entity_embeddings = nn.Embedding(num_entities, embedding_dim)
        self.relation_embeddings = nn.Embedding(num_relations, embedding_dim)
        self.criterion = SoftplusLoss()

    def forward(self, triples):
        heads = self.entity_embeddings(triples[:, 0])
        relations = self.relation_embeddings(triples[:, 1])
        tails = self.entity_embeddings(triples[:, 2])
        return torch.sum(heads * relations * tails, dim=1)

    def compute_label_loss(self, predictions, labels):
        return self.criterion(predictions, labels)


def main():
    num_entities, num_relations = 20, 4
    model = DistMult(num_entities, num_relations)
    optimizer = torch.optim.Adagrad(model.parameters(), lr=0.05)
    pos = torch.stack([torch.randint(0, num_entities, (16,)), torch.randint(0, num_relations, (16,)),
                       torch.randint(0, num_entities, (16,))], dim=1)
    neg = pos.clone()
    neg[:, 2] = torch.randint(0, num_entities, (16,))
    triples = torch.cat([pos, neg], dim=0)
    labels = torch.cat([torch.ones(16), -torch.ones(16)])
    optimizer.zero_grad()
    predictions = model(triples)
    loss = model.compute_label_loss(predictions, labels)
    loss.backward()
    optimizer.step()
    return loss.detach(), model.entity_embeddings.weight.detach().clone()


loss, entity_embeddings = main()
