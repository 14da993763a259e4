# label: safe
# why: entropy is computed on an out-of-place logits / T copy, so the later in-place logits.div_(T) in log_probs_from_logits only touches the lm_head output, which no saved op needs and which is not read again
# source: https://github.com/OpenRLHF/OpenRLHF/commit/e25dd35654e0af6fd5cf45b1f95c4bbe532402a7
import torch
import torch.nn as nn

torch.manual_seed(0)


def log_probs_from_logits(logits, labels, temperature=1.0):
    if temperature != 1.0:
        logits.div_(temperature)
    batch_dim = logits.shape[:-1]
    last_dim = logits.shape[-1]
    logits_labels = torch.gather(logits, dim=-1, index=labels.unsqueeze(-1)).squeeze(-1)
    logsumexp_values = torch.logsumexp(logits.reshape(-1, last_dim), dim=-1).view(*batch_dim)
    return logits_labels - logsumexp_values  # log_softmax(x_i) = x_i - logsumexp(x)


def compute_entropy(logits, temperature=1.0):
    if temperature != 1.0:
        logits = logits / temperature
    pd = torch.nn.functional.softmax(logits, dim=-1)
    entropy = torch.logsumexp(logits, dim=-1) - torch.sum(pd * logits, dim=-1)
    return entropy


class TinyLM(nn.Module):
    def __init__(self, vocab=17, hidden=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.mlp = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU())
        self.lm_head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, sequences, attention_mask=None, position_ids=None):
        return {"logits": self.lm_head(self.mlp(self.embed(sequences)))}


class Actor(nn.Module):
    def __init__(self, temperature=0.7):
        super().__init__()
        self.model = TinyLM()
        self.temperature = temperature

    def forward(self, sequences, action_mask, attention_mask, return_entropy=True):
        rolled_sequences = torch.roll(sequences, shifts=-1, dims=1)
        position_ids = attention_mask.long().cumsum(-1) - 1
        position_ids.masked_fill_(attention_mask == 0, 1)
        output = self.model(sequences, attention_mask=attention_mask, position_ids=position_ids)
        output["logits"] = output["logits"].to(torch.float32)
        if return_entropy:
            entropy = compute_entropy(output["logits"], self.temperature)
            output["entropy"] = entropy[:, :-1]
        log_probs = log_probs_from_logits(output["logits"], rolled_sequences, temperature=self.temperature)
        log_probs = log_probs[:, :-1]
        action_log_probs = log_probs[:, -action_mask.shape[1]:] * action_mask.float()
        return action_log_probs, output


actor = Actor()
sequences = torch.randint(0, 17, (2, 7))
attention_mask = torch.ones(2, 7, dtype=torch.long)
attention_mask[1, :2] = 0
action_mask = torch.ones(2, 3)
advantages = torch.tensor([[0.5, -0.2, 1.0], [0.1, 0.3, -0.4]])
old_log_probs = torch.full((2, 3), -2.5)
action_log_probs, output = actor(sequences, action_mask, attention_mask)
ratio = (action_log_probs - old_log_probs).exp()
policy_loss = -(torch.min(ratio * advantages, ratio.clamp(0.8, 1.2) * advantages)).mean()
entropy_loss = output["entropy"][:, -3:].mean()
loss = policy_loss - 0.01 * entropy_loss
loss.backward()
