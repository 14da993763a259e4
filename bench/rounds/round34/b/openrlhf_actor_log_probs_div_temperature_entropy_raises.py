# label: hazard raises
# why: Actor.forward computes the entropy from output["logits"] (softmax / logsumexp / `pd * logits` save the logits for backward) and then calls log_probs_from_logits, which divides the same logits by the temperature with `logits.div_(temperature)`; with temperature != 1 the PPO loss backward hits the modified saved logits (the commit made it `logits = logits / temperature`).
# source: https://github.com/OpenRLHF/OpenRLHF/commit/208db1fd9fc8b494dc411d624bc72aebe2a2de73
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def _ensure_full_tensor(tensor: torch.Tensor) -> torch.Tensor:
    """Convert DTensor to full tensor if needed (for TP compatibility)."""
    try:
        from torch.distributed.tensor import DTensor

        if isinstance(tensor, DTensor):
            return tensor.full_tensor()
    except ImportError:
        pass
    return tensor


def _logsumexp_by_chunk(logits: torch.Tensor, chunk_size: int = 1024) -> torch.Tensor:
    seq_len = logits.shape[0]
    logsumexp_values = torch.zeros((seq_len), device=logits.device, dtype=logits.dtype)
    for s_idx in range(0, seq_len, chunk_size):
        end_idx = min(s_idx + chunk_size, seq_len)
        logsumexp_values[s_idx:end_idx] = torch.logsumexp(logits[s_idx:end_idx], dim=-1)

    return logsumexp_values


def log_probs_from_logits(logits: torch.Tensor, labels: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    # Handle DTensor from Tensor Parallel (convert to full tensor before log_probs computation)
    logits = _ensure_full_tensor(logits)

    if temperature != 1.0:
        logits.div_(temperature)  # <-- IPL001, IPL004
    if logits.dtype in [torch.float32, torch.float64]:
        batch_dim = logits.shape[:-1]
        last_dim = logits.shape[-1]
        logits_labels = torch.gather(logits, dim=-1, index=labels.unsqueeze(-1)).squeeze(-1)
        logsumexp_values = _logsumexp_by_chunk(logits.reshape(-1, last_dim))
        logsumexp_values = logsumexp_values.view(*batch_dim)
        log_probs_labels = logits_labels - logsumexp_values  # log_softmax(x_i) = x_i - logsumexp(x)
    else:
        log_probs_labels = []
        for row_logits, row_labels in zip(logits, labels):  # loop to reduce peak mem consumption
            row_log_probs = F.log_softmax(row_logits, dim=-1)
            row_log_probs_labels = row_log_probs.gather(dim=-1, index=row_labels.unsqueeze(-1)).squeeze(-1)
            log_probs_labels.append(row_log_probs_labels)
        log_probs_labels = torch.stack(log_probs_labels)
    return log_probs_labels


def compute_entropy(logits: torch.Tensor):
    pd = torch.nn.functional.softmax(logits, dim=-1)
    entropy = torch.logsumexp(logits, dim=-1) - torch.sum(pd * logits, dim=-1)
    return entropy


def masked_mean(tensor: torch.Tensor, mask: Optional[torch.Tensor], dim: int = None) -> torch.Tensor:
    if mask is None:
        return tensor.mean(dim=dim)
    return (tensor * mask).sum(dim=dim) / mask.sum(dim=dim)


class TinyCausalLM(nn.Module):
    """Stand-in for the HF causal LM: returns a dict-like output with "logits"."""

    def __init__(self, vocab_size=32, hidden=16):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden)
        self.pos = nn.Embedding(64, hidden)
        self.mlp = nn.Sequential(nn.Linear(hidden, hidden), nn.GELU())
        self.lm_head = nn.Linear(hidden, vocab_size, bias=False)

    def forward(self, sequences, attention_mask=None, position_ids=None):
        h = self.embed(sequences) + self.pos(position_ids)
        h = h + self.mlp(h)
        return {"logits": self.lm_head(h)}


class Actor(nn.Module):
    def __init__(self, pretrain_or_model, temperature=1.0):
        super().__init__()
        self.model = pretrain_or_model
        self.temperature = temperature
        self.packing_samples = False

    def forward(
        self,
        sequences: torch.LongTensor,
        action_mask: Optional[torch.Tensor] = None,
        attention_mask: Optional[torch.Tensor] = None,
        return_output=False,
        return_entropy=False,
    ):
        """Returns action log probs"""
        foward_attention_mask = attention_mask
        rolled_sequences = torch.roll(sequences, shifts=-1, dims=1)
        position_ids = attention_mask.long().cumsum(-1) - 1
        position_ids.masked_fill_(attention_mask == 0, 1)

        output = self.model(sequences, attention_mask=foward_attention_mask, position_ids=position_ids)
        output["logits"] = output["logits"].to(torch.float32)

        if return_entropy:
            assert return_output
            entropy = compute_entropy(_ensure_full_tensor(output["logits"]))
            output["entropy"] = entropy[:, :-1]

        log_probs = log_probs_from_logits(output["logits"], rolled_sequences, temperature=self.temperature)
        log_probs = log_probs[:, :-1]

        action_log_probs = log_probs[:, -action_mask.shape[1] :] * action_mask.float()

        return (action_log_probs, output) if return_output else action_log_probs


def ppo_actor_step(actor, sequences, attention_mask, action_mask, old_action_log_probs, advantages, entropy_coef=0.01):
    action_log_probs, output = actor(
        sequences, action_mask=action_mask, attention_mask=attention_mask, return_output=True, return_entropy=True
    )
    ratio = (action_log_probs - old_action_log_probs).exp()
    surr1 = ratio * advantages
    surr2 = ratio.clamp(1 - 0.2, 1 + 0.2) * advantages
    policy_loss = masked_mean(-torch.min(surr1, surr2), action_mask)
    entropy_loss = masked_mean(output["entropy"][:, -action_mask.shape[1] :], action_mask)
    loss = policy_loss - entropy_coef * entropy_loss
    loss.backward()
    return loss.detach()


def main():
    actor = Actor(TinyCausalLM(), temperature=0.7)
    sequences = torch.randint(0, 32, (2, 10))
    attention_mask = torch.ones(2, 10, dtype=torch.long)
    attention_mask[1, :2] = 0
    action_mask = torch.ones(2, 4)
    old_action_log_probs = torch.randn(2, 4) * 0.1 - 3.0
    advantages = torch.randn(2, 4)
    loss = ppo_actor_step(actor, sequences, attention_mask, action_mask, old_action_log_probs, advantages)
    return loss, actor.model.lm_head.weight.grad.clone()


loss, lm_head_grad = main()
