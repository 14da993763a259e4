# label: safe
# why: BeamSearch.step adds the cumulative hypothesis scores into lprobs with lprobs.add_() and wraps indices with indices_buf.fmod_(); both are fresh per-step tensors produced under no_grad that the generator never reads again, so the in-place updates do not change the search result.
# source: https://github.com/facebookresearch/fairseq/commit/0108f4427cf687f935ace255b32b36f9eb1783ab (pre-change fairseq/search.py)
from typing import Optional

import torch
import torch.nn as nn
from torch import Tensor

torch.manual_seed(0)


class Search(nn.Module):
    def __init__(self, vocab_size):
        super().__init__()
        self.vocab_size = vocab_size


class BeamSearch(Search):
    def step(self, step: int, lprobs, scores: Optional[Tensor]):
        bsz, beam_size, vocab_size = lprobs.size()
        if step == 0:
            # at the first step all hypotheses are equally likely, so use only the first beam
            lprobs = lprobs[:, ::beam_size, :].contiguous()
        else:
            # make probs contain cumulative scores for each hypothesis
            assert scores is not None
            lprobs.add_(scores[:, :, step - 1].unsqueeze(-1))

        top_prediction = torch.topk(
            lprobs.view(bsz, -1),
            k=min(beam_size * 2, lprobs.view(bsz, -1).size(1) - 1),
        )
        scores_buf = top_prediction[0]
        indices_buf = top_prediction[1]
        beams_buf = torch.div(indices_buf, vocab_size, rounding_mode="floor")
        indices_buf.fmod_(vocab_size)
        return scores_buf, indices_buf, beams_buf


class ToyDecoder(nn.Module):
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.proj = nn.Linear(dim, vocab_size)

    def forward_decoder(self, tokens):
        h = self.embed(tokens).mean(1)
        return torch.log_softmax(self.proj(torch.tanh(h)), dim=-1)


class SequenceGenerator(nn.Module):
    def __init__(self, model, vocab_size, beam_size=3, max_len=5):
        super().__init__()
        self.model = model
        self.vocab_size = vocab_size
        self.beam_size = beam_size
        self.max_len = max_len
        self.search = BeamSearch(vocab_size)

    @torch.no_grad()
    def generate(self, bsz):
        beam_size = self.beam_size
        tokens = torch.zeros(bsz * beam_size, self.max_len + 1, dtype=torch.long)
        scores = torch.zeros(bsz * beam_size, self.max_len)
        for step in range(self.max_len):
            lprobs = self.model.forward_decoder(tokens[:, : step + 1])
            cand_scores, cand_indices, cand_beams = self.search.step(
                step,
                lprobs.view(bsz, -1, self.vocab_size),
                scores.view(bsz, beam_size, -1)[:, :, :step],
            )
            # keep the first beam_size candidates
            cand_scores = cand_scores[:, :beam_size]
            cand_indices = cand_indices[:, :beam_size]
            cand_beams = cand_beams[:, :beam_size]
            bbsz_offsets = (torch.arange(bsz) * beam_size).unsqueeze(1)
            cand_bbsz_idx = (cand_beams + bbsz_offsets).reshape(-1)
            tokens = tokens[cand_bbsz_idx]
            scores = scores[cand_bbsz_idx]
            tokens[:, step + 1] = cand_indices.reshape(-1)
            scores[:, step] = cand_scores.reshape(-1)
        return tokens, scores


def main():
    model = ToyDecoder(vocab_size=11, dim=8)
    generator = SequenceGenerator(model, vocab_size=11)
    tokens, scores = generator.generate(bsz=2)
    return tokens, scores


tokens, scores = main()
