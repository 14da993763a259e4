# label: safe no-twin
# why: the entity embeddings are renormalized by assigning `weight.data` in a pre-batch hook, i.e. before the batch's forward pass, so no graph built from the old values exists when they are overwritten.
# source: https://github.com/uma-pi1/kge/commit/b56ddfefbc900770c70e400b41dd08b0df45e535
import torch
import torch.nn as nn

torch.manual_seed(0)


class LookupEmbedder(nn.Module):
    def __init__(self, vocab_size, dim, normalize_p=2.0):
        super().__init__()
        self.normalize_p = normalize_p
        self._embeddings = nn.Embedding(vocab_size, dim)
        nn.init.normal_(self._embeddings.weight)

    def prepare_job(self, job):
        if self.normalize_p > 0:
            def normalize_embeddings(job, trace_entry=None):
                with torch.no_grad():
                    self._embeddings.weight.data = torch.nn.functional.normalize(
                        self._embeddings.weight.data, p=self.normalize_p, dim=-1
                    )
            # normalize before starting a batch
            job.pre_batch_hooks.append(normalize_embeddings)

    def embed(self, indexes):
        return self._embeddings(indexes.long())


class TransE(nn.Module):
    def __init__(self, num_entities, num_relations, dim):
        super().__init__()
        self._entity_embedder = LookupEmbedder(num_entities, dim, normalize_p=2.0)
        self._relation_embedder = LookupEmbedder(num_relations, dim, normalize_p=-1.0)

    def score_spo(self, s, p, o):
        s_emb = self._entity_embedder.embed(s)
        p_emb = self._relation_embedder.embed(p)
        o_emb = self._entity_embedder.embed(o)
        return -torch.norm(s_emb + p_emb - o_emb, p=1, dim=-1)


class TrainingJobNegativeSampling:
    def __init__(self, model, lr=0.05, margin=1.0):
        self.model = model
        self.pre_batch_hooks = []
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        self.loss = nn.MarginRankingLoss(margin=margin)
        model._entity_embedder.prepare_job(self)
        model._relation_embedder.prepare_job(self)

    def run_batch(self, triples, num_entities):
        for f in self.pre_batch_hooks:
            f(self)
        s, p, o = triples[:, 0], triples[:, 1], triples[:, 2]
        neg_o = torch.randint(0, num_entities, o.shape)
        pos = self.model.score_spo(s, p, o)
        neg = self.model.score_spo(s, p, neg_o)
        loss = self.loss(pos, neg, torch.ones_like(pos))
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.detach()


def main():
    num_entities, num_relations = 10, 3
    model = TransE(num_entities, num_relations, dim=4)
    job = TrainingJobNegativeSampling(model)
    triples = torch.stack([torch.randint(0, num_entities, (6,)), torch.randint(0, num_relations, (6,)),
                           torch.randint(0, num_entities, (6,))], dim=1)
    losses = torch.stack([job.run_batch(triples, num_entities) for _ in range(3)])
    return losses, model._entity_embedder._embeddings.weight.detach().clone()


losses, entity_weights = main()
