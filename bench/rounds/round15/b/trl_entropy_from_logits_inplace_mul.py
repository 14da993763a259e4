# label: hazard raises
# why: probs is the output of logps.exp(), which ExpBackward saved; probs.mul_(logps) overwrites it, so the GRPO loss with an entropy bonus fails on backward.
# source: https://github.com/huggingface/trl/pull/7125
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def selective_log_softmax(logits, index):
    logps = F.log_softmax(logits, dim=-1)
    return torch.gather(logps, dim=-1, index=index.unsqueeze(-1)).squeeze(-1)


def entropy_from_logits(logits: torch.Tensor, chunk_size: int = 4) -> torch.Tensor:
    original_shape = logits.shape[:-1]
    num_classes = logits.shape[-1]
    flat_logits = logits.reshape(-1, num_classes)
    entropies = []
    for chunk in flat_logits.split(chunk_size, dim=0):
        logps = F.log_softmax(chunk, dim=-1)
        # Compute probs in-place from logps to avoid a separate exp() allocation:
        #   entropy = -sum(exp(logps) * logps)  =>  probs.mul_(logps) then negate sum
        probs = logps.exp()
        probs.mul_(logps)  # <-- IPL001: probs is exp's output, saved by ExpBackward
        entropies.append(probs.sum(-1).neg_())
    return torch.cat(entropies, dim=0).reshape(original_shape)


class TinyLM(nn.Module):
    def __init__(self, vocab=11, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids):
        return self.lm_head(torch.tanh(self.embed(input_ids)))


model = TinyLM()
completion_ids = torch.randint(0, 11, (2, 5))
advantages = torch.tensor([0.5, -0.5])
old_per_token_logps = torch.randn(2, 5).clamp(max=-0.1)
entropy_coef = 0.01

logits = model(completion_ids)
per_token_logps = selective_log_softmax(logits, completion_ids)
entropies = entropy_from_logits(logits)
coef_1 = torch.exp(per_token_logps - old_per_token_logps)
coef_2 = torch.clamp(coef_1, 1 - 0.2, 1 + 0.2)
per_token_loss = -torch.min(coef_1 * advantages.unsqueeze(1), coef_2 * advantages.unsqueeze(1))
loss = per_token_loss.mean() - entropy_coef * entropies.mean()
loss.backward()
