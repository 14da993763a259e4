# label: safe
# why: with the processors applied to the raw lm_head logits (before log_softmax, as in the fixed beam search), the in-place -inf write hits a Linear output that no backward formula saved.
# source: https://github.com/huggingface/transformers/pull/10638
import torch
from torch import nn

torch.manual_seed(0)


class MinLengthLogitsProcessor:
    def __init__(self, min_length, eos_token_id):
        self.min_length = min_length
        self.eos_token_id = eos_token_id

    def __call__(self, input_ids, scores):
        cur_len = input_ids.shape[-1]
        if cur_len < self.min_length:
            scores[:, self.eos_token_id] = -float("inf")
        return scores


class LogitsProcessorList(list):
    def __call__(self, input_ids, scores):
        for processor in self:
            scores = processor(input_ids, scores)
        return scores


class TinyDecoder(nn.Module):
    def __init__(self, vocab_size=11, hidden=8):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden)
        self.rnn = nn.GRUCell(hidden, hidden)
        self.lm_head = nn.Linear(hidden, vocab_size)

    def forward(self, input_ids, state):
        state = self.rnn(self.embed(input_ids[:, -1]), state)
        return self.lm_head(state), state


def beam_search(model, input_ids, beam_scores, state, logits_processor, max_length):
    num_beams = input_ids.shape[0]
    all_scores = []
    while input_ids.shape[-1] < max_length:
        next_token_logits, new_state = model(input_ids, state)
        next_token_logits = logits_processor(input_ids, next_token_logits)
        next_token_scores = nn.functional.log_softmax(next_token_logits, dim=-1)
        next_token_scores = next_token_scores + beam_scores[:, None].expand_as(next_token_scores)
        vocab_size = next_token_scores.shape[-1]
        flat = next_token_scores.view(1, num_beams * vocab_size)
        top_scores, top_tokens = torch.topk(flat, num_beams, dim=1, largest=True, sorted=True)
        beam_idx = top_tokens[0] // vocab_size
        beam_next = top_tokens[0] % vocab_size
        beam_scores = top_scores[0]
        state = new_state[beam_idx]
        input_ids = torch.cat([input_ids[beam_idx, :], beam_next.unsqueeze(-1)], dim=-1)
        all_scores.append(beam_scores)
    return input_ids, torch.stack(all_scores)


generator = TinyDecoder()
processors = LogitsProcessorList([MinLengthLogitsProcessor(min_length=4, eos_token_id=2)])
start = torch.zeros(3, 1, dtype=torch.long)
sequences, scores = beam_search(generator, start, torch.zeros(3), torch.zeros(3, 8), processors, max_length=5)
loss = -scores[-1].logsumexp(0)
loss.backward()
