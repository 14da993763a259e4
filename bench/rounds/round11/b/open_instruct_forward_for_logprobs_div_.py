# label: safe
# why: temperature scaling divides a slice of the lm_head logits in place and pad labels are overwritten on a clone; neither tensor is saved by any earlier backward node, so the in-place writes are harmless.
# source: https://github.com/allenai/open-instruct/pull/1817 (forward_for_logprobs; later revision uses logits.div_(temperature))
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyCausalLM(nn.Module):
    def __init__(self, vocab=20, hidden=8):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.mlp = nn.Sequential(nn.Linear(hidden, hidden), nn.GELU())
        self.lm_head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, input_ids, attention_mask=None, position_ids=None):
        h = self.embed_tokens(input_ids)
        h = h + self.mlp(h)
        return {"logits": self.lm_head(h)}


def log_softmax_and_gather(logits, index):
    logprobs = logits.log_softmax(dim=-1)
    return torch.gather(logprobs, dim=-1, index=index.unsqueeze(-1)).squeeze(-1)


def forward_for_logprobs(model, query_responses, attention_mask, position_ids, pad_token_id, temperature):
    output = model(input_ids=query_responses, attention_mask=attention_mask, position_ids=position_ids)
    logits = output["logits"] if isinstance(output, dict) else output
    # The logits at position i predict token i+1, so we align them with labels shifted by 1
    logits = logits[:, :-1]
    if temperature != 1.0:
        logits.div_(temperature)
    labels = query_responses[:, 1:].clone()
    # Replace pad tokens with 0 to avoid index out of bounds errors in gather
    labels[labels == pad_token_id] = 0
    logprob_BT = log_softmax_and_gather(logits, labels)
    return logprob_BT


def mask_logprobs(logprobs, mask):
    return torch.where(mask, logprobs, torch.zeros_like(logprobs))


model = TinyCausalLM()
pad_token_id = 19
query_responses = torch.randint(0, 19, (3, 7))
query_responses[0, -2:] = pad_token_id
response_mask = (query_responses != pad_token_id)
position_ids = torch.arange(7).unsqueeze(0).expand(3, 7)
advantages = torch.tensor([0.5, -1.0, 0.25])

old_logprobs = forward_for_logprobs(model, query_responses, None, position_ids, pad_token_id, 0.7).detach()
new_logprobs = forward_for_logprobs(model, query_responses, None, position_ids, pad_token_id, 0.7)
new_logprobs = mask_logprobs(new_logprobs, response_mask[:, 1:])
ratio = torch.exp(new_logprobs - mask_logprobs(old_logprobs, response_mask[:, 1:]))
pg_loss = -(advantages[:, None] * ratio * response_mask[:, 1:]).sum() / response_mask[:, 1:].sum()
pg_loss.backward()
