# label: safe
# why: the logits are the fresh output of the lm_head Linear (which keeps only its input and weight), so dividing them by the temperature in place before log_softmax/entropy gives the same values and gradients as logits / temperature
# source: https://github.com/volcengine/verl/blob/30911f133aa300ae9d8e341dba8e63192335705e/verl/utils/torch_functional.py
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def post_process_logits(input_ids, logits, temperature, top_k, top_p):
    if temperature != 1.0:
        logits = logits.div_(temperature)  # inplace operation to avoid OOM
    return logits


def logprobs_from_logits(logits, labels):
    logp = F.log_softmax(logits, dim=-1)
    return torch.gather(logp, -1, labels.unsqueeze(-1)).squeeze(-1)


def entropy_from_logits(logits):
    pd = torch.softmax(logits, dim=-1)
    return torch.logsumexp(logits, dim=-1) - torch.sum(pd * logits, dim=-1)


class TinyCausalLM(nn.Module):
    def __init__(self, vocab=9, hidden=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.block = nn.Sequential(nn.Linear(hidden, hidden), nn.GELU())
        self.lm_head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, input_ids):
        return self.lm_head(self.block(self.embed(input_ids)))


def compute_policy_loss(old_log_prob, log_prob, advantages, eos_mask, cliprange):
    negative_approx_kl = log_prob - old_log_prob
    ratio = torch.exp(negative_approx_kl)
    pg_losses = -advantages * ratio
    pg_losses2 = -advantages * torch.clamp(ratio, 1.0 - cliprange, 1.0 + cliprange)
    return (torch.max(pg_losses, pg_losses2) * eos_mask).sum() / eos_mask.sum()


actor = TinyCausalLM()
optimizer = torch.optim.AdamW(actor.parameters(), lr=1e-2)
input_ids = torch.randint(0, 9, (2, 7))
response_length = 4
responses = input_ids[:, -response_length:]
eos_mask = torch.ones(2, response_length)
eos_mask[1, -1] = 0
temperature = 0.7

with torch.no_grad():
    old_logits = actor(input_ids)
    old_logits = post_process_logits(input_ids, old_logits, temperature, None, None)
    old_log_prob = logprobs_from_logits(old_logits[:, -response_length - 1:-1], responses)
advantages = torch.randn(2, response_length)

logits = actor(input_ids)
logits = post_process_logits(input_ids, logits, temperature, None, None)
response_logits = logits[:, -response_length - 1:-1]
log_prob = logprobs_from_logits(response_logits, responses)
entropy = (entropy_from_logits(response_logits) * eos_mask).sum() / eos_mask.sum()
pg_loss = compute_policy_loss(old_log_prob, log_prob, advantages, eos_mask, cliprange=0.2)
loss = pg_loss - 0.01 * entropy
optimizer.zero_grad()
loss.backward()
optimizer.step()
