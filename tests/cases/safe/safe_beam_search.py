# label: safe
# why: fairseq/HF-style beam search under torch.inference_mode: finished beams are masked with masked_fill_, scores accumulated with += and token history written by index assignment, all on tensors no graph uses.
import torch
import torch.nn as nn
import torch.nn.functional as F


class GRUDecoder(nn.Module):
    def __init__(self, vocab=9, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.cell = nn.GRUCell(dim, dim)
        self.out = nn.Linear(dim, vocab)

    def step(self, tokens, state):
        state = self.cell(self.embed(tokens), state)
        return F.log_softmax(self.out(state), dim=-1), state


def beam_search(model, init_state, bos=1, eos=2, beam=3, max_len=6):
    vocab = model.out.out_features
    state = init_state.repeat(beam, 1)
    tokens = torch.full((beam, max_len + 1), bos, dtype=torch.long)
    scores = torch.zeros(beam)
    scores[1:] = float("-inf")
    finished = torch.zeros(beam, dtype=torch.bool)
    with torch.inference_mode():
        for t in range(max_len):
            lprobs, state = model.step(tokens[:, t], state)
            lprobs[finished] = float("-inf")
            lprobs[finished, eos] = 0.0
            lprobs += scores.unsqueeze(1)
            flat = lprobs.view(-1)
            top_scores, top_idx = flat.topk(beam)
            beam_idx = torch.div(top_idx, vocab, rounding_mode="floor")
            word_idx = top_idx % vocab
            tokens = tokens[beam_idx]
            state = state[beam_idx]
            tokens[:, t + 1] = word_idx
            scores = top_scores
            finished = finished[beam_idx] | (word_idx == eos)
            if finished.all():
                break
        lengths = (tokens != eos).sum(1).float()
        normed = scores / lengths
        normed.masked_fill_(~finished & (lengths < 2), float("-inf"))
    return tokens, normed


torch.manual_seed(0)
dec = GRUDecoder()
h0 = torch.randn(1, 8)
hyps, hyp_scores = beam_search(dec, h0)
hyps_f = hyps.float()
best = hyp_scores.clone()
