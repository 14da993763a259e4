# label: hazard silent
# why: in the ASR beam search `sequence_scores = scores` aliases the top-k scores, so the coverage penalty applied afterwards with `scores -= penalty` also lands in sequence_scores, which was meant to keep the raw accumulated log-probabilities of each hypothesis.
# source: https://github.com/speechbrain/speechbrain/commit/c3c2ebd07b9d9d9e3b96b75e61d72fe411fd579b
import torch

torch.manual_seed(0)

batch_size, beam_size, vocab_size, enc_len, steps = 2, 3, 6, 5, 3
beam_offset = (torch.arange(batch_size) * beam_size)

# stand-ins for the decoder's per-step outputs (log-softmax over vocab, attention over encoder frames)
step_log_probs = torch.randn(steps, batch_size * beam_size, vocab_size).log_softmax(-1)
step_attn = torch.rand(steps, batch_size * beam_size, enc_len).softmax(-1)

sequence_scores = torch.zeros(batch_size * beam_size)
sequence_scores.view(batch_size, beam_size)[:, 1:] = float("-inf")  # only the first beam is alive at t=0
coverage = None
history = []
for t in range(steps):
    log_probs = step_log_probs[t]
    attn = step_attn[t]
    scores = sequence_scores.unsqueeze(1).expand(-1, vocab_size) + log_probs

    scores, candidates = scores.view(batch_size, -1).topk(beam_size, dim=-1)
    inp_tokens = (candidates % vocab_size).view(batch_size * beam_size)
    scores = scores.view(batch_size * beam_size)
    sequence_scores = scores

    predecessors = (candidates // vocab_size + beam_offset.unsqueeze(1).expand_as(candidates)).view(
        batch_size * beam_size
    )
    cur_attn = torch.index_select(attn, dim=0, index=predecessors)
    if t == 0:
        coverage = cur_attn
    else:
        coverage = coverage + cur_attn
        penalty = torch.max(coverage, coverage.clone().fill_(0.5)).sum(-1)
        penalty = penalty - coverage.size(-1) * 0.5
        penalty = penalty.view(batch_size * beam_size)
        scores -= penalty * 1  # <-- IPL002: scores is sequence_scores, which is read again as the hypotheses' scores
    history.append(inp_tokens)

    ranked = scores.view(batch_size, beam_size).argsort(-1, descending=True)

final_sequence_scores = sequence_scores.clone()
tokens = torch.stack(history, 1)
