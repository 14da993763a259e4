# label: safe
# why: the EOS block is written into a fresh `scores.new_zeros` buffer and added out of place, so the `eos_scores` view of scores keeps its values
import torch
import torch.nn as nn

torch.manual_seed(0)

VOCAB, BEAMS, HID, EOS = 11, 3, 16, 2

cell = nn.GRUCell(HID, HID)
embed = nn.Embedding(VOCAB, HID)
lm_head = nn.Linear(HID, VOCAB)

hidden = torch.randn(BEAMS, HID)
tokens = torch.tensor([1, 4, 7])
beam_scores = torch.tensor([0.0, -0.5, -1.0])

finished = []
for step in range(2):
    hidden = cell(embed(tokens), hidden)
    log_probs = lm_head(hidden).log_softmax(-1)
    scores = log_probs + beam_scores[:, None]
    eos_scores = scores[:, EOS]
    penalty = scores.new_zeros(scores.shape)
    penalty[:, EOS] = -1e4
    top_scores, flat_ids = (scores + penalty).view(-1).topk(BEAMS)
    finished.append(eos_scores.logsumexp(0))
    beam_idx = flat_ids // VOCAB
    tokens = flat_ids % VOCAB
    hidden = hidden[beam_idx]
    beam_scores = top_scores

loss = -(beam_scores.logsumexp(0) + torch.stack(finished).logsumexp(0))
loss.backward()
finished_scores = torch.stack(finished).detach()
grad_head = lm_head.weight.grad.clone()
grad_cell = cell.weight_hh.grad.clone()
