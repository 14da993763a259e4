# label: safe
# why: fairseq's BeamSearch.step adds cumulative scores into lprobs with add_ and the generator masks lprobs in place, but generation runs under no_grad and the caller never rereads lprobs after search.step, so the in-place writes change nothing.
# source: https://github.com/facebookresearch/fairseq/blob/411531734df8c7294e82c68e9d42177382f362ef/fairseq/search.py (BeamSearch.step before commit 0108f4427cf687f935ace255b32b36f9eb1783ab replaced lprobs.add_ with an out-of-place add)
import math
from typing import Optional

import torch
import torch.nn as nn
from torch import Tensor

torch.manual_seed(0)


class BeamSearch(object):
    def __init__(self, vocab_size):
        self.vocab_size = vocab_size

    def step(self, step: int, lprobs, scores: Optional[Tensor]):
        bsz, beam_size, vocab_size = lprobs.size()
        if step == 0:
            # at the first step all hypotheses are equally likely, so use only the first beam
            lprobs = lprobs[:, ::beam_size, :].contiguous()
        else:
            # make probs contain cumulative scores for each hypothesis
            assert scores is not None
            lprobs.add_(scores[:, :, step - 1].unsqueeze(-1))

        top_prediction = torch.topk(lprobs.view(bsz, -1), k=min(beam_size * 2, lprobs.view(bsz, -1).size(1) - 1))
        scores_buf = top_prediction[0]
        indices_buf = top_prediction[1]
        beams_buf = torch.div(indices_buf, vocab_size, rounding_mode="floor")
        indices_buf.fmod_(vocab_size)
        return scores_buf, indices_buf, beams_buf


class TinyDecoder(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.cell = nn.GRUCell(dim, dim)
        self.out = nn.Linear(dim, vocab)

    def forward_decoder(self, prev_tokens, state):
        state = self.cell(self.embed(prev_tokens), state)
        return torch.log_softmax(self.out(state), dim=-1), state


class SequenceGenerator(nn.Module):
    def __init__(self, model, vocab_size, beam_size=2, max_len=4, pad=0, unk=1, eos=2, unk_penalty=0.5):
        super().__init__()
        self.model = model
        self.vocab_size = vocab_size
        self.beam_size = beam_size
        self.max_len = max_len
        self.pad, self.unk, self.eos = pad, unk, eos
        self.unk_penalty = unk_penalty
        self.search = BeamSearch(vocab_size)

    @torch.no_grad()
    def generate(self, bsz):
        beam_size = self.beam_size
        tokens = torch.full((bsz * beam_size, self.max_len + 1), self.eos, dtype=torch.long)
        scores = torch.zeros(bsz * beam_size, self.max_len)
        state = torch.zeros(bsz * beam_size, self.model.cell.hidden_size)
        bbsz_offsets = (torch.arange(0, bsz) * beam_size).unsqueeze(1)
        for step in range(self.max_len):
            lprobs, state = self.model.forward_decoder(tokens[:, step], state)
            lprobs[lprobs != lprobs] = torch.tensor(-math.inf).to(lprobs)
            lprobs[:, self.pad] = -math.inf  # never select pad
            lprobs[:, self.unk] -= self.unk_penalty  # apply unk penalty
            lprobs[:, self.eos] = -math.inf

            cand_scores, cand_indices, cand_beams = self.search.step(
                step,
                lprobs.view(bsz, -1, self.vocab_size),
                scores.view(bsz, beam_size, -1)[:, :, :step],
            )
            cand_bbsz_idx = cand_beams.add(bbsz_offsets)
            active_bbsz_idx = cand_bbsz_idx[:, :beam_size].reshape(-1)
            tokens = torch.index_select(tokens, dim=0, index=active_bbsz_idx)
            scores = torch.index_select(scores, dim=0, index=active_bbsz_idx)
            state = torch.index_select(state, dim=0, index=active_bbsz_idx)
            tokens[:, step + 1] = cand_indices[:, :beam_size].reshape(-1)
            scores[:, step] = cand_scores[:, :beam_size].reshape(-1)
        return tokens, scores


generator = SequenceGenerator(TinyDecoder(7, 5), vocab_size=7)
hyp_tokens, hyp_scores = generator.generate(bsz=2)
