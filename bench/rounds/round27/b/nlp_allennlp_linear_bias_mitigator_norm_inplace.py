# label: hazard raises
# why: LinearBiasMitigator normalises the bias direction in place, but torch.linalg.norm saved that very tensor (the differentiable two-means direction) for backward, so training through the bias mitigation fails.
# source: https://github.com/allenai/allennlp/commit/5a76922e253017ebf5d774701c550881e1f530fd ("finished tests for bias mitigation methods", pre-fix allennlp/fairness/bias_mitigators.py)
import torch

torch.manual_seed(0)


class ConfigurationError(Exception):
    pass


class BiasDirection:
    def __init__(self, requires_grad: bool = False):
        self.requires_grad = requires_grad


class TwoMeansBiasDirection(BiasDirection):
    def __call__(self, seed_embeddings1: torch.Tensor, seed_embeddings2: torch.Tensor):
        if seed_embeddings1.size(-1) != seed_embeddings2.size(-1):
            raise ConfigurationError("Seed embeddings must have the same dimensionality.")
        with torch.set_grad_enabled(self.requires_grad):
            seed_embeddings1_mean = torch.mean(seed_embeddings1.reshape(-1, seed_embeddings1.size(-1)), dim=0)
            seed_embeddings2_mean = torch.mean(seed_embeddings2.reshape(-1, seed_embeddings2.size(-1)), dim=0)
            bias_direction = seed_embeddings1_mean - seed_embeddings2_mean
            return bias_direction / torch.linalg.norm(bias_direction)


class BiasMitigator:
    def __init__(self, requires_grad: bool = False):
        self.requires_grad = requires_grad

    def _proj(self, u: torch.Tensor, v: torch.Tensor, normalize: bool = False):
        proj = torch.matmul(u, v.reshape(-1, 1)) * v
        if normalize:
            return proj / torch.dot(v, v)
        return proj

    def _remove_component(self, embeddings: torch.Tensor, bias_direction: torch.Tensor, normalize: bool = False):
        return embeddings - self._proj(embeddings, bias_direction, normalize)


class LinearBiasMitigator(BiasMitigator):
    def __call__(self, evaluation_embeddings: torch.Tensor, bias_direction: torch.Tensor):
        if evaluation_embeddings.ndim < 2:
            raise ConfigurationError("evaluation_embeddings must have at least two dimensions.")
        if bias_direction.ndim != 1:
            raise ConfigurationError("bias_direction must be one-dimensional.")
        if evaluation_embeddings.size(-1) != bias_direction.size(-1):
            raise ConfigurationError("All embeddings and bias_direction must have the same dimensionality.")

        with torch.set_grad_enabled(self.requires_grad):
            bias_direction /= torch.linalg.norm(bias_direction)  # <-- IPL001
            return self._remove_component(evaluation_embeddings, bias_direction)


def main():
    vocab_size, dim = 20, 8
    embedding = torch.nn.Embedding(vocab_size, dim)
    classifier = torch.nn.Linear(dim, 2)
    he_ids, she_ids = torch.tensor([1, 3, 5]), torch.tensor([2, 4, 6])
    sentence = torch.tensor([[7, 8, 9, 10], [11, 12, 13, 14]])

    bias_direction = TwoMeansBiasDirection(requires_grad=True)(embedding(he_ids), embedding(she_ids))
    mitigated = LinearBiasMitigator(requires_grad=True)(embedding(sentence), bias_direction)
    logits = classifier(mitigated.mean(dim=1))
    loss = torch.nn.functional.cross_entropy(logits, torch.tensor([0, 1]))
    loss.backward()
    return loss.detach(), embedding.weight.grad


loss, embedding_grad = main()
