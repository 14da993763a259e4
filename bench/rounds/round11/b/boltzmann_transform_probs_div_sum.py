# label: hazard raises
# why: the softmax-style transform normalises probs with probs /= probs.sum(...), overwriting the exp() output that ExpBackward saved for the gradient.
# source: https://github.com/pytorch/pytorch/pull/5842
import torch
from torch.distributions import constraints
from torch.distributions.transforms import Transform

torch.manual_seed(0)


class BoltzmannTransform(Transform):
    """
    Transform from unconstrained space to the simplex via `y = exp(x)` then
    normalizing.
    """
    domain = constraints.real
    codomain = constraints.simplex
    event_dim = 1

    def __eq__(self, other):
        return isinstance(other, BoltzmannTransform)

    def _call(self, x):
        logprobs = x
        probs = (logprobs - logprobs.max(-1, True)[0]).exp()
        probs /= probs.sum(-1, True)  # <-- IPL001: divides the exp() output in place; ExpBackward saved it
        return probs

    def _inverse(self, y):
        probs = y
        return probs.log()


class TopicModel(torch.nn.Module):
    def __init__(self, vocab=7, n_topics=3):
        super().__init__()
        self.encoder = torch.nn.Linear(vocab, n_topics)
        self.topic_word = torch.nn.Parameter(torch.randn(n_topics, vocab))
        self.to_simplex = BoltzmannTransform()

    def forward(self, bow):
        theta = self.to_simplex(self.encoder(bow))
        beta = self.to_simplex(self.topic_word)
        word_probs = theta @ beta
        return -(bow * word_probs.log()).sum(-1).mean()


model = TopicModel()
bow = torch.randint(0, 3, (4, 7)).float()
loss = model(bow)
loss.backward()
