# label: hazard raises
# why: `_get_dimension` turns the converted arc scores into a leaf that requires grad, and `_check_potentials` then fills padded slices of a view of that leaf with `semiring.zero_`, an in-place write on a view of a leaf.
# source: https://github.com/harvardnlp/pytorch-struct/issues/104
import torch

torch.manual_seed(0)


class LogSemiring:
    zero = -1e5
    one = 0.0

    @staticmethod
    def size():
        return 1

    @classmethod
    def convert(cls, potentials):
        return potentials.unsqueeze(0)

    @classmethod
    def unconvert(cls, potentials):
        return potentials.squeeze(0)

    @staticmethod
    def zero_(xs):
        return xs.fill_(-1e5)  # <-- IPL003

    @staticmethod
    def sum(xs, dim=-1):
        return torch.logsumexp(xs, dim=dim)


def convert(logits):
    "move root arcs from diagonal"
    new_shape = list(logits.shape)
    new_shape[1] += 1
    new_shape[2] += 1
    new_logits = torch.zeros(new_shape).type_as(logits.data)
    new_logits.fill_(-1e9)
    new_logits[:, 1:, 1:] = logits

    N = logits.size(1)
    new_logits[:, 0, 1:] = logits[:, torch.arange(N), torch.arange(N)]
    new_logits[:, torch.arange(1, N + 1), torch.arange(1, N + 1)] = -1e9
    return new_logits


class DepTree:
    def __init__(self, semiring=LogSemiring):
        self.semiring = semiring

    def _get_dimension(self, edge):
        edge.requires_grad_(True)
        return edge.shape

    def _check_potentials(self, arc_scores, lengths=None):
        semiring = self.semiring
        batch, N, N2, *_ = self._get_dimension(arc_scores)
        assert N == N2, "Non-square potentials"
        if lengths is None:
            lengths = torch.LongTensor([N - 1] * batch).to(arc_scores.device)
        assert max(lengths) <= N, "Length longer than N"
        arc_scores = semiring.convert(arc_scores)
        for b in range(batch):
            semiring.zero_(arc_scores[:, b, lengths[b] + 1 :, :])
            semiring.zero_(arc_scores[:, b, :, lengths[b] + 1 :])

        return arc_scores, batch, N, lengths

    def logpartition(self, arc_scores_in, lengths=None):
        semiring = self.semiring
        arc_scores_in = convert(arc_scores_in)
        arc_scores_in, batch, N, lengths = self._check_potentials(arc_scores_in, lengths)
        # stand-in for the inside algorithm: log-sum over heads for each modifier
        per_word = semiring.sum(arc_scores_in, dim=-2)
        v = per_word[..., 1:].sum(-1)
        return v, [arc_scores_in]

    def sum(self, logpotentials, lengths=None):
        v = self.logpartition(logpotentials, lengths)[0]
        return self.semiring.unconvert(v)


def main():
    B, N = 3, 5
    phi = torch.randn(B, N, N)
    lengths = torch.tensor([5, 4, 3])
    partition = DepTree().sum(phi, lengths)
    return partition


result = main()
