# label: safe
# why: GRPO's _get_per_token_logps divides the sliced logits by the sampling temperature with logits.div_(), but the logits come straight out of the lm_head Linear, whose backward never reads its own output, so the in-place scaling is harmless.
# source: https://github.com/huggingface/trl/pull/6621
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def selective_log_softmax(logits, index):
    selected_logits = torch.gather(logits, dim=-1, index=index.unsqueeze(-1)).squeeze(-1)
    logsumexp_values = torch.stack([torch.logsumexp(lg, dim=-1) for lg in logits])
    per_token_logps = selected_logits - logsumexp_values
    return per_token_logps


class TinyCausalLM(nn.Module):
    def __init__(self, vocab_size=13, hidden_size=16):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, hidden_size)
        self.mlp = nn.Sequential(nn.Linear(hidden_size, hidden_size), nn.GELU())
        self.lm_head = nn.Linear(hidden_size, vocab_size, bias=False)

    def forward(self, input_ids, attention_mask=None):
        hidden_states = self.mlp(self.embed_tokens(input_ids))
        return self.lm_head(hidden_states)


class GRPOTrainer:
    def __init__(self, model, temperature=0.7, epsilon=0.2):
        self.model = model
        self.temperature = temperature
        self.epsilon_low = epsilon
        self.epsilon_high = epsilon

    def _get_per_token_logps(self, model, input_ids, attention_mask, logits_to_keep):
        logits = model(input_ids=input_ids, attention_mask=attention_mask)
        logits = logits[:, :-1, :]  # exclude the last logit: it corresponds to the next token pred
        input_ids = input_ids[:, -logits_to_keep:]
        logits = logits[:, -logits_to_keep:, :]
        # Divide logits by sampling temperature.
        logits.div_(self.temperature)
        return selective_log_softmax(logits, input_ids)

    def compute_loss(self, inputs):
        prompt_ids, completion_ids = inputs["prompt_ids"], inputs["completion_ids"]
        input_ids = torch.cat([prompt_ids, completion_ids], dim=1)
        completion_mask = inputs["completion_mask"]
        logits_to_keep = completion_ids.size(1)
        per_token_logps = self._get_per_token_logps(self.model, input_ids, None, logits_to_keep)
        old_per_token_logps = per_token_logps.detach()
        advantages = inputs["advantages"]
        coef_1 = torch.exp(per_token_logps - old_per_token_logps)
        coef_2 = torch.clamp(coef_1, 1 - self.epsilon_low, 1 + self.epsilon_high)
        per_token_loss1 = coef_1 * advantages.unsqueeze(1)
        per_token_loss2 = coef_2 * advantages.unsqueeze(1)
        per_token_loss = -torch.min(per_token_loss1, per_token_loss2)
        loss = (per_token_loss * completion_mask).sum() / completion_mask.sum()
        return loss


def main():
    model = TinyCausalLM()
    trainer = GRPOTrainer(model)
    inputs = {
        "prompt_ids": torch.randint(0, 13, (4, 3)),
        "completion_ids": torch.randint(0, 13, (4, 5)),
        "completion_mask": torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 1, 1, 1, 0], [1, 0, 0, 0, 0]]).float(),
        "advantages": torch.tensor([0.5, -1.0, 1.2, -0.7]),
    }
    loss = trainer.compute_loss(inputs)
    loss.backward()
    return loss.detach(), model.lm_head.weight.grad, model.embed_tokens.weight.grad


loss, lm_head_grad, embed_grad = main()
