# label: safe
# why: the fix divides the freshly produced fp32 logits by the temperature once, before any op has saved them; entropy and log-probs are then computed from the scaled tensor.
# source: https://github.com/OpenRLHF/OpenRLHF/pull/1319
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def compute_entropy(logits: torch.Tensor):
    pd = torch.nn.functional.softmax(logits, dim=-1)
    entropy = torch.logsumexp(logits, dim=-1) - torch.sum(pd * logits, dim=-1)
    return entropy


class TinyCausalLM(nn.Module):
    def __init__(self, vocab=13, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids, attention_mask=None):
        h = torch.tanh(self.embed(input_ids))
        return {"logits": self.lm_head(h)}


def policy_loss_fn(log_probs, old_log_probs, advantages, action_mask, clip_eps=0.2):
    ratio = (log_probs - old_log_probs).exp()
    surr1 = ratio * advantages
    surr2 = ratio.clamp(1 - clip_eps, 1 + clip_eps) * advantages
    loss = -torch.min(surr1, surr2)
    return (loss * action_mask).sum() / action_mask.sum()


def log_probs_from_logits(logits: torch.Tensor, labels: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    if temperature != 1.0:
        logits = logits / temperature
    log_probs = F.log_softmax(logits, dim=-1)
    return log_probs.gather(dim=-1, index=labels.unsqueeze(-1)).squeeze(-1)


class Actor(nn.Module):
    def __init__(self, model, temperature=1.0):
        super().__init__()
        self.model = model
        self.temperature = temperature

    def forward(self, sequences, attention_mask=None, return_entropy=False):
        output = self.model(sequences, attention_mask=attention_mask)
        # https://github.com/OpenRLHF/OpenRLHF/pull/634
        output["logits"] = output["logits"].to(torch.float32)
        # scale once, up front, so entropy and log-probs describe the same policy
        if self.temperature != 1.0:
            output["logits"].div_(self.temperature)

        if return_entropy:
            entropy = compute_entropy(output["logits"])
            output["entropy"] = entropy

        rolled_sequences = sequences[:, 1:]
        log_probs = log_probs_from_logits(output["logits"][:, :-1, :], rolled_sequences)
        return log_probs, output

actor = Actor(TinyCausalLM(), temperature=0.7)
sequences = torch.randint(0, 13, (2, 7))
attention_mask = torch.ones_like(sequences)
action_mask = torch.ones(2, 6)
old_log_probs = -torch.rand(2, 6) - 1.0
advantages = torch.tensor([[0.3], [-0.2]])
entropy_coef = 0.01

log_probs, output = actor(sequences, attention_mask, return_entropy=True)
loss = policy_loss_fn(log_probs, old_log_probs, advantages, action_mask)
loss = loss - entropy_coef * output["entropy"][:, :-1].mean()
loss.backward()
model = actor.model
