# label: hazard silent
# why: score_h_inverse shifts the relation ids of the caller's rt_batch in place, so the evaluator's later lookups with the same batch use inverse-relation ids
# source: https://github.com/pykeen/pykeen/commit/c6734771fc35d11e7284c6e03cdd9de0c049b303 (PR #374)
import torch
import torch.nn as nn

torch.manual_seed(0)


class TriplesFactory:
    def __init__(self, num_entities, num_base_relations):
        self.num_entities = num_entities
        # The number of relations stored in the triples factory includes the number of inverse relations
        self.num_relations = 2 * num_base_relations


class DistMult(nn.Module):
    def __init__(self, triples_factory, embedding_dim=6, predict_with_sigmoid=False):
        super().__init__()
        self.triples_factory = triples_factory
        self.entity_embeddings = nn.Embedding(triples_factory.num_entities, embedding_dim)
        self.relation_embeddings = nn.Embedding(triples_factory.num_relations, embedding_dim)
        self.predict_with_sigmoid = predict_with_sigmoid

    def score_t(self, hr_batch):
        h = self.entity_embeddings(hr_batch[:, 0])
        r = self.relation_embeddings(hr_batch[:, 1])
        t = self.entity_embeddings.weight
        return (h * r) @ t.t()

    def score_h(self, rt_batch):
        r = self.relation_embeddings(rt_batch[:, 0])
        t = self.entity_embeddings(rt_batch[:, 1])
        h = self.entity_embeddings.weight
        return (r * t) @ h.t()

    def score_h_inverse(self, rt_batch):
        # The number of relations stored in the triples factory includes the number of inverse relations
        num_relations = self.triples_factory.num_relations // 2
        rt_batch[:, 0] = rt_batch[:, 0] + num_relations  # <-- IPL004: rewrites the caller's rt_batch in place

        # The score_t function requires (entity, relation) pairs instead of (relation, entity) pairs
        rt_batch = rt_batch.flip(1)
        scores = self.score_t(rt_batch)
        if self.predict_with_sigmoid:
            scores = torch.sigmoid(scores)
        return scores


def evaluate_head_prediction(model, mapped_triples):
    rt_batch = mapped_triples[:, 1:]
    inverse_scores = model.score_h_inverse(rt_batch)
    direct_scores = model.score_h(rt_batch)
    true_heads = mapped_triples[:, 0]
    loss = nn.functional.cross_entropy(inverse_scores, true_heads) + nn.functional.cross_entropy(direct_scores, true_heads)
    return loss, inverse_scores, direct_scores


factory = TriplesFactory(num_entities=7, num_base_relations=3)
model = DistMult(factory)
mapped_triples = torch.tensor([[0, 1, 2], [3, 0, 4], [5, 2, 6], [1, 1, 0]])
loss, inverse_scores, direct_scores = evaluate_head_prediction(model, mapped_triples)
loss.backward()
relation_ids_after = mapped_triples[:, 1].clone()
