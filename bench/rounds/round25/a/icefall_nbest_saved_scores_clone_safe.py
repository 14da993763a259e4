# label: safe
# why: the fix clones the arc score column into saved_scores (and clones lm_scores before assigning it), so writing the new scores into the arcs in place no longer changes the values that are restored afterwards.
# source: https://github.com/k2-fsa/icefall/pull/111
import torch

torch.manual_seed(0)


class Fsa:
    """Minimal stand-in for k2.Fsa: every arc is (src_state, dest_state, label, score)
    and `scores` is a view of the last field of the arcs, as in k2."""

    def __init__(self, arcs, path_splits):
        self.arcs = arcs  # float64 [num_arcs, 4]
        self.path_splits = path_splits
        self.lm_scores = torch.zeros(arcs.shape[0], dtype=arcs.dtype)

    @property
    def scores(self):
        return self.arcs[:, 3]

    @scores.setter
    def scores(self, value):
        self.arcs[:, 3].copy_(value)

    def get_tot_scores(self, use_double_scores=True, log_semiring=False):
        scores = self.scores.to(torch.float64) if use_double_scores else self.scores
        return torch.stack([scores[b:e].sum() for b, e in zip(self.path_splits[:-1], self.path_splits[1:])])


class Nbest(object):
    def __init__(self, fsa, shape):
        self.fsa = fsa
        self.shape = shape

    def compute_am_scores(self):
        """Compute AM scores of each linear FSA (i.e., each path within an utterance)."""
        saved_scores = self.fsa.scores.clone()

        # The `scores` of every arc consists of `am_scores` and `lm_scores`
        self.fsa.scores = self.fsa.scores - self.fsa.lm_scores

        am_scores = self.fsa.get_tot_scores(use_double_scores=True, log_semiring=False)
        self.fsa.scores = saved_scores

        return am_scores

    def compute_lm_scores(self):
        """Compute LM scores of each linear FSA (i.e., each path within an utterance)."""
        saved_scores = self.fsa.scores.clone()

        # The `scores` of every arc consists of `am_scores` and `lm_scores`
        self.fsa.scores = self.fsa.lm_scores.clone()

        lm_scores = self.fsa.get_tot_scores(use_double_scores=True, log_semiring=False)
        self.fsa.scores = saved_scores

        return lm_scores

    def tot_scores(self):
        return self.fsa.get_tot_scores(use_double_scores=True, log_semiring=False)


def main():
    num_arcs = 12
    arcs = torch.zeros(num_arcs, 4, dtype=torch.float64)
    arcs[:, 0] = torch.arange(num_arcs, dtype=torch.float64)
    arcs[:, 1] = arcs[:, 0] + 1
    arcs[:, 2] = torch.randint(1, 30, (num_arcs,)).to(torch.float64)
    am = -torch.rand(num_arcs, dtype=torch.float64)
    lm = -0.5 * torch.rand(num_arcs, dtype=torch.float64)
    fsa = Fsa(arcs, path_splits=[0, 4, 8, 12])
    fsa.lm_scores = lm
    fsa.scores = am + lm
    nbest = Nbest(fsa, shape=(1, 3))

    am_scores = nbest.compute_am_scores()
    lm_scores = nbest.compute_lm_scores()
    ngram_lm_scale = 0.5
    rescored = am_scores + ngram_lm_scale * lm_scores
    tot_scores = nbest.tot_scores()
    return rescored, tot_scores, fsa.scores.clone()


rescored, tot_scores, final_arc_scores = main()
